// The platform's own export imports back even where one message is a step's results larger than a
// turn's body: a client's post of results (up to 12 MiB) joins the server tools' results of the
// same step in one stored message, so that message passes 12 Mi characters, and an import that
// capped a message at a turn's body refused the export the platform had just written. The step is
// saved here through the object's record, as the turn loop saves it (running the turn itself
// would have the offline model count the tokens of 12 MB several times over: minutes).
import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../core/types";
import { MAX_IMPORT_MESSAGE_CHARS, TURN_BODY_BYTES } from "../../services/transfer/import-staging";
import { api, createConversation, inConversation, newTenantWithId, transcript } from "./helpers";

const TYPES = { json: "application/json", jsonl: "application/x-ndjson" } as const;

describe("an export whose step results pass a turn's body", () => {
  it("imports back in both formats, every message as stored", { timeout: 180_000 }, async () => {
    const { key, tenantId } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const prompt = "p".repeat(45_000);
    // A client's post of 13 blocks of 965,000 characters (about 12.5 MB, under the 12 MiB a post
    // may be) with a server tool's result (conversation_read of the 45,000-character prompt).
    const clientBlocks = Array.from({ length: 13 }, (_, i) => ({
      type: "text" as const,
      text: String(i % 10).repeat(965_000),
    }));
    expect(JSON.stringify({ results: [{ tool_use_id: "toolu_c", content: clientBlocks }] }).length).toBeLessThan(
      TURN_BODY_BYTES,
    );
    const step: NewMessage[] = [
      { role: "user", content: [{ type: "text", text: prompt }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_s", name: "conversation_read", input: { from_seq: 1, to_seq: 1 } },
          { type: "tool_use", id: "toolu_c", name: "my_client", input: {} },
        ],
        stopReason: "tool_use",
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_s", content: `[1] user:\n${prompt}` },
          { type: "tool_result", tool_use_id: "toolu_c", content: clientBlocks },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Read both." }], stopReason: "end_turn" },
    ];
    await inConversation(conv, async (instance) => {
      await instance.record.load({ tenantId, conversationId: conv });
      await instance.record.append(step);
    });
    const original = await transcript(conv, key);
    expect(original.length).toBe(4);
    const stepChars = JSON.stringify(original[2]).length;
    expect(stepChars).toBeGreaterThan(12 * 1024 * 1024);
    expect(stepChars).toBeLessThanOrEqual(MAX_IMPORT_MESSAGE_CHARS);

    for (const format of ["jsonl", "json"] as const) {
      const exported = await api("GET", `/v1/conversations/${conv}/export?format=${format}`, undefined, { key });
      expect(exported.status).toBe(200);
      const imported = await api("POST", "/v1/conversations/import", exported.text, {
        key,
        raw: true,
        headers: { "content-type": TYPES[format] },
      });
      expect(imported.status, `${format}: ${imported.text.slice(0, 300)}`).toBe(201);
      const copy = await transcript(imported.json.id, key);
      const strip = (m: (typeof original)[number]) => JSON.stringify({ ...m, id: undefined });
      expect(copy.map(strip)).toEqual(original.map(strip));
    }
  });
});
