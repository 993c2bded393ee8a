// The notes memory_save kept in an exchange that no later request carries go with it: a turn that
// ends refused (core/replay-rules.ts leaves it out whole, and no tool may bring its words back) and
// an exchange a regenerate replaced (else each regenerate saves the note once more), unless the
// note was edited since it was saved.
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
 */
async function refusingAfterTools(id: string): Promise<void> {
  await inConversation(id, (o) => {
    o.env = { ...o.env, MODEL_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "sk-test" } as Env;
  });
  const offline = createOfflineModelFetch();
  globalThis.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://api.anthropic.com") || typeof init?.body !== "string") return realFetch(input, init);
    const body = JSON.parse(init.body) as { messages: { role: string; content: unknown }[] };
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
});
