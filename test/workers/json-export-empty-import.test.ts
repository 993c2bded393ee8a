// A JSON export document holds the same rule as JSONL: its `messages` may be empty only when its
// `conversation` says the conversation had none (lastSeq 0). An export whose messages were edited
// or cut away is refused (400), with nothing staged left behind, not imported as an empty
// conversation.
import { describe, expect, it } from "vitest";
import { stagedImportMarkerPrefix, tenantPrefix } from "../../r2-layout";
import { api, importText, createConversation, newTenantWithId, r2KeysUnder, send } from "./helpers";

describe("a JSON export with its messages emptied", () => {
  it("is refused when its conversation says it had messages, and nothing is left staged", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
    const exported = (await api("GET", `/v1/conversations/${conv}/export?format=json`, undefined, { key })).text;
    const doc = JSON.parse(exported) as { conversation: { lastSeq: number }; messages: unknown[] };
    expect(doc.conversation.lastSeq).toBeGreaterThan(0);
    expect(doc.messages.length).toBeGreaterThan(0);
    const before = (await api("GET", "/v1/conversations", undefined, { key })).json.data.length;
    const r = await importText(JSON.stringify({ ...doc, messages: [] }), key);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error?.message).toBe("messages: none; a transcript needs at least one message");
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data.length).toBe(before);
    expect(await r2KeysUnder(`${tenantPrefix(tenantId)}imports/`)).toEqual([]);
    expect((await r2KeysUnder(stagedImportMarkerPrefix)).filter((k) => k.endsWith(`/${tenantId}`))).toEqual([]);
  });

  it("still imports empty when its conversation says lastSeq 0, wherever the conversation sits", async () => {
    const { key } = await newTenantWithId();
    const r = await importText('{"messages":[],"conversation":{"title":"later","lastSeq":0,"messageCount":0}}', key);
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ messageCount: 0, lastSeq: 0 });
  });
});
