// Every entrance refuses what the Messages API would refuse once stored (after which every later
// request of the conversation fails): blank text, tool schemas with a top-level union, images over
// the API's limits. Each answer is a 400 invalid_request naming the field, given before any model
// call, and nothing is written.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, transcript } from "./helpers";
import { ofType } from "../blocks";
import type { ApiError } from "../route-types";

// A PNG header claiming 9000 x 10 px: over the API's 8000 px side.
const WIDE_PNG = "iVBORw0KGgoAAAANSUhEUgAAIygAAAAKCAYAAAAAAAAA";
const BLANK = " \n\t ";
const UNION = {
  type: "object",
  oneOf: [
    { properties: { a: { type: "string" } }, required: ["a"] },
    { properties: { b: { type: "string" } }, required: ["b"] },
  ],
};

const expect400 = (r: { status: number; json: { error?: ApiError } }, message: string | RegExp) => {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error?.type).toBe("invalid_request");
  expect(r.json.error?.message).toMatch(message);
};

describe("turn entrances", () => {
  it("refuse blank text, a tool schema with a top-level union and an oversized image, storing nothing", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const turn = (body: unknown) => api("POST", `/v1/conversations/${id}/messages`, body, { key });
    expect400(await turn({ content: BLANK }), /^content: must contain non-whitespace text$/);
    expect400(
      await turn({
        content: [
          { type: "text", text: "hi" },
          { type: "text", text: "" },
        ],
      }),
      /^content\.1\.text: must contain non-whitespace text$/,
    );
    expect400(
      await turn({ content: "pick", tools: [{ name: "pick", input_schema: UNION }] }),
      /^tools\.0\.input_schema: oneOf at the top level/,
    );
    expect400(
      await turn({ content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: WIDE_PNG } }] }),
      /^content\.0\.source\.data: 9000x10 px; a side may be at most 8000 px$/,
    );
    expect400(
      await api("POST", "/v1/channels/desk/messages", { content: "\u0085" }, { key }),
      /^content: must contain non-whitespace text$/,
    );
    expect(await transcript(id, key)).toEqual([]);
  });

  it("refuse blank client tool results over HTTP and the websocket", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const post = (content: unknown) =>
      api("POST", `/v1/conversations/${id}/tool-results`, { results: [{ tool_use_id: "toolu_1", content }] }, { key });
    expect400(await post(BLANK), /^results\.0\.content: must contain non-whitespace text$/);
    expect400(await post([]), /^results\.0\.content: must hold at least one block$/);
    const ws = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    ws.ws!.send(JSON.stringify({ type: "send", content: BLANK }));
    expect((await ws.next((e) => e.type === "error")).error.message).toBe("content: must contain non-whitespace text");
    ws.ws!.send(
      JSON.stringify({
        type: "tool_results",
        results: [{ tool_use_id: "toolu_1", content: [{ type: "text", text: " " }] }],
      }),
    );
    expect(
      ofType(await ws.next((e) => e.type === "error" && /results/.test(e.error.message)), "error").error.message,
    ).toBe("results.0.content.0.text: must contain non-whitespace text");
    ws.ws!.close();
    expect(await transcript(id, key)).toEqual([]);
  });
});

describe("imports", () => {
  it("refuse blank text, naming the message and the block", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect400(
      await api(
        "POST",
        `/v1/conversations/${id}/import`,
        {
          messages: [
            { role: "user", text: "q" },
            { role: "assistant", text: BLANK },
          ],
        },
        { key },
      ),
      /^messages\.1\.text: must contain non-whitespace text$/,
    );
    expect(await transcript(id, key)).toEqual([]);
    const messages = [
      { role: "user", content: "run it" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "run", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: " " }] },
      { role: "assistant", content: "done" },
    ];
    const r = await api("POST", "/v1/conversations/import", JSON.stringify({ messages }), {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect400(r, /^messages\[2\]\.content\.0\.content: must contain non-whitespace text$/);
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toHaveLength(1);
  });
});

describe("notes, automations and tools", () => {
  it("refuse a blank note, a blank automation prompt and a registered tool schema with a top-level union", async () => {
    const key = await newTenant();
    expect400(
      await api("POST", "/v1/memory", { text: "\u0085 \u001c" }, { key }),
      /^text: must contain non-whitespace text$/,
    );
    expect400(
      await api(
        "POST",
        "/v1/automations",
        { name: "a", channel: "desk", prompt: BLANK, schedule: "0 * * * *" },
        { key },
      ),
      /^prompt: must contain non-whitespace text$/,
    );
    expect400(
      await api(
        "POST",
        "/v1/tools",
        { kind: "client", name: "pick", description: "Picks.", inputSchema: UNION },
        { key },
      ),
      /^inputSchema: oneOf at the top level/,
    );
    const made = await api(
      "POST",
      "/v1/tools",
      { kind: "client", name: "pick", description: "Picks.", inputSchema: { type: "object" } },
      { key },
    );
    expect(made.status).toBe(201);
    expect400(
      await api("PATCH", `/v1/tools/${made.json.id}`, { inputSchema: { type: "object", anyOf: UNION.oneOf } }, { key }),
      /^inputSchema: anyOf at the top level/,
    );
    expect((await api("GET", "/v1/memory", undefined, { key })).json.data).toEqual([]);
    expect((await api("GET", "/v1/automations", undefined, { key })).json.data).toEqual([]);
  });
});
