// A turn's or a tool result's content is a string or an array of blocks: a refused block is a 400
// naming the block's own problem (its field, its type), never the string branch's "expected
// string, received array", over HTTP and the websocket alike. Nothing is written.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, transcript } from "./helpers";
import { ofType } from "../blocks";
import type { ApiError } from "../route-types";

const expect400 = (r: { status: number; json: { error?: ApiError } }, message: string | RegExp) => {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error?.type).toBe("invalid_request");
  expect(r.json.error?.message).toMatch(message);
};

describe("content block refusals", () => {
  it("POST /messages names the block's field or type", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const turn = (content: unknown) => api("POST", `/v1/conversations/${id}/messages`, { content }, { key });
    expect400(await turn([{ type: "text" }]), /^content\.0\.text: required$/);
    expect400(
      await turn([{ type: "text", text: 5 }]),
      /^content\.0\.text: Invalid input: expected string, received number$/,
    );
    expect400(await turn([{ text: "hi" }]), /^content\.0\.type: must be one of text, image$/);
    expect400(
      await turn([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } }]),
      /^content\.0\.type: must be one of text, image$/,
    );
    expect400(
      await turn([{ type: "image", source: { type: "url", url: "https://example.com/cat.png" } }]),
      /^content\.0\.source\.type: Invalid input: expected "base64"/,
    );
    expect400(await turn(42), /^content: Invalid input: expected string or array, received number$/);
    expect(await transcript(id, key)).toEqual([]);
  });

  it("POST /tool-results and the websocket name a result's block", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const bad = { results: [{ tool_use_id: "toolu_1", content: [{ type: "text" }] }] };
    expect400(
      await api("POST", `/v1/conversations/${id}/tool-results`, bad, { key }),
      /^results\.0\.content\.0\.text: required$/,
    );
    const ws = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    ws.ws!.send(JSON.stringify({ type: "send", content: [{ type: "text" }] }));
    expect(ofType(await ws.next((e) => e.type === "error"), "error").error.message).toBe("content.0.text: required");
    ws.ws!.send(JSON.stringify({ type: "tool_results", ...bad }));
    expect(
      ofType(await ws.next((e) => e.type === "error" && /results/.test(e.error.message)), "error").error.message,
    ).toBe("results.0.content.0.text: required");
    ws.ws!.close();
    expect(await transcript(id, key)).toEqual([]);
  });
});
