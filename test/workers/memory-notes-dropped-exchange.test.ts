// The notes memory_save kept in an exchange that no later request carries go with it: a turn that
// ends refused (core/replay-rules.ts leaves it out whole, and no tool may bring its words back) and
// an exchange a regenerate replaced (else each regenerate saves the note once more), unless the
// note was edited since it was saved. What decides is the stored turn, as /replay reads it: a turn
// whose refusal's fallback then failed is left out whole too, though it ends `error`.
import { afterEach, describe, expect, it } from "vitest";
import { createOfflineModelFetch } from "../../core/offline-model";
import { ofType } from "../blocks";
import { api, createConversation, inConversation, newTenant, send, turnMessages } from "./helpers";

const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});

const titles = async (key: string) =>
  ((await api("GET", "/v1/memory", undefined, { key })).json.data as { title: string }[]).map((n) => n.title);

/**
 * The conversation's model becomes "anthropic", answered by the offline model, which refuses any
 * request whose last message carries a tool result: a turn's call after its first tool refuses.
 * `opusFails`: any request for an Opus model (a refusal's fallback) is a 400 instead.
 */
async function refusingAfterTools(id: string, opusFails = false): Promise<void> {
  await inConversation(id, (o) => {
    o.env = { ...o.env, MODEL_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "sk-test" } as Env;
  });
  const offline = createOfflineModelFetch();
  globalThis.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://api.anthropic.com") || typeof init?.body !== "string") return realFetch(input, init);
    const body = JSON.parse(init.body) as { model?: string; messages: { role: string; content: unknown }[] };
    if (opusFails && body.model?.includes("opus")) {
      const error = {
        type: "error",
        error: { type: "invalid_request_error", message: "injected: the fallback fails" },
      };
      return new Response(JSON.stringify(error), { status: 400, headers: { "content-type": "application/json" } });
    }
    const last = body.messages.at(-1)?.content;
    if (Array.isArray(last) && last.some((b: { type?: string }) => b.type === "tool_result"))
      body.messages = [{ role: "user", content: [{ type: "text", text: "x\n@stop refusal bio" }] }];
    return offline(url, { ...init, body: JSON.stringify(body) });
  };
}

describe("notes of an exchange no later request carries", () => {
  it("a turn that ends refused keeps none of the notes it saved", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await refusingAfterTools(id);
    const refused = await send(
      id,
      '@tool memory_save {"text":"the zanzibarite culture steps","title":"zanzibarite"}',
      key,
    );
    globalThis.fetch = realFetch;
    expect(refused.json.stop_reason).toBe("refusal");
    // The note was saved during the turn (its result says so), and is gone once the turn has ended.
    expect(JSON.stringify(refused.json.messages)).toMatch(/saved note mem_/);
    expect(await titles(key)).toEqual([]);

    const other = await createConversation(undefined, key);
    const found = await send(other, '@tool memory_search {"query":"\\u007Aanzibarite"}', key);
    const result = String(ofType(turnMessages(found)[2].content[0], "tool_result").content);
    expect(result).not.toContain("culture steps");
    expect(result).toMatch(/^no memory matches/);
  });

  it("a regenerate replaces the note its exchange saved, not adds one", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const save = '@tool memory_save {"text":"the user\'s locker code is 4711","title":"locker code"}';
    expect((await send(id, save, key)).status).toBe(200);
    expect(await titles(key)).toEqual(["locker code"]);
    for (let i = 0; i < 2; i++) {
      const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { key });
      expect(again.status).toBe(200);
      expect(await titles(key)).toEqual(["locker code"]);
    }
  });

  it("a note edited since its exchange stays when the exchange is regenerated", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const saved = await send(id, '@tool memory_save {"text":"window seat","title":"seats"}', key);
    const noteId = /saved note (mem_[^:]+):/.exec(JSON.stringify(saved.json.messages))?.[1];
    expect(noteId).toBeDefined();
    const edited = await api("PATCH", `/v1/memory/${noteId}`, { text: "aisle seat" }, { key });
    expect(edited.status).toBe(200);
    expect((await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { key })).status).toBe(200);
    expect(await titles(key)).toEqual(["seats", "seats"]);
    expect((await api("GET", `/v1/memory/${noteId}`, undefined, { key })).json.text).toBe("aisle seat");
  });

  it("a refused turn whose fallback then fails keeps none of its notes: /replay leaves the whole turn out", async () => {
    const key = await newTenant();
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" }, key);
    await refusingAfterTools(id, true);
    const failed = await send(
      id,
      '@tool memory_save {"text":"the zanzibarite culture steps","title":"zanzibarite"}',
      key,
    );
    globalThis.fetch = realFetch;
    expect(failed.json.stop_reason).toBe("error");
    expect(JSON.stringify(failed.json.messages)).toMatch(/saved note mem_/);
    expect((await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json.messages).toEqual([]);
    expect(await titles(key)).toEqual([]);
  });

  it("a note edited while the refused turn waits on client tools stays when the turn ends refused", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await refusingAfterTools(id);
    const weather = {
      name: "get_weather",
      description: "The weather in a city",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    };
    const content = '@tool memory_save {"text":"draft","title":"groceries"}\n@tool get_weather {"city":"Paris"}';
    const paused = await api("POST", `/v1/conversations/${id}/messages`, { content, tools: [weather] }, { key });
    expect(paused.json.stop_reason).toBe("requires_action");
    // Saved already: its result is held until the client's come in, so the note is found by listing.
    const notes = (await api("GET", "/v1/memory", undefined, { key })).json.data as { id: string; title: string }[];
    expect(notes.map((n) => n.title)).toEqual(["groceries"]);
    const noteId = notes[0].id;
    const edited = await api("PATCH", `/v1/memory/${noteId}`, { text: "milk, eggs, my own list" }, { key });
    expect(edited.status).toBe(200);
    const [call] = paused.json.requires_action!.calls;
    const ended = await api(
      "POST",
      `/v1/conversations/${id}/tool-results`,
      { results: [{ tool_use_id: call.id, content: "sunny" }] },
      { key },
    );
    globalThis.fetch = realFetch;
    expect(ended.json.stop_reason).toBe("refusal");
    const kept = await api("GET", `/v1/memory/${noteId}`, undefined, { key });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json.text).toBe("milk, eggs, my own list");
  });
});
