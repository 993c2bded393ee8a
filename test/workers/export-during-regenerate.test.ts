// An export taken while a regenerate writes its mark: the regenerate appends the prompt's copy (R2,
// then the index) and only then writes the head that marks the replaced exchange superseded. An
// export whose head was read in between must not carry the copy after that exchange, unmarked:
// imported, it would replay the prompt twice.
import { describe, expect, it } from "vitest";
import { holdSupersedeHeadWrite } from "./hold-supersede-write";
import { api, createConversation, newTenantWithId, send, transcript } from "./helpers";

describe("an export during a regenerate's mark", () => {
  it("never carries the copy of the prompt after the exchange it replaced, unmarked", async () => {
    const { key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
    const { reached, release } = await holdSupersedeHeadWrite(conv);
    const regenerating = api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true }, { key });
    let exported: Awaited<ReturnType<typeof api>>;
    try {
      await reached;
      exported = await api("GET", `/v1/conversations/${conv}/export?format=json`, undefined, { key });
    } finally {
      release();
    }
    expect((await regenerating).status).toBe(200);
    expect(exported.status).toBe(200);
    const doc = JSON.parse(exported.text) as {
      conversation: { lastSeq: number };
      messages: { seq: number; role: string; superseded?: true }[];
    };
    const replayed = doc.messages.filter((m) => !m.superseded);
    // Each prompt replayed once: no user message after the reply that asks the same again.
    expect(replayed.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(doc.conversation.lastSeq).toBe(doc.messages.at(-1)!.seq);
    const imported = await api("POST", "/v1/conversations/import", exported.text, {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(imported.status, imported.text).toBe(201);
    const copy = await transcript(imported.json.id, key);
    expect(copy.filter((m) => !m.superseded).map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
