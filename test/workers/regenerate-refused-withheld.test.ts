// A refused turn that a regenerate replaced stays refused for the model's reads: conversation_read
// and memory_get answer its messages with the `[withheld: …]` note (durable-objects/conversation/
// index-outbox.ts refusedAmong, each superseded exchange read as a history of its own), whether the
// copy is answered by another model or refused again. A superseded exchange that was not refused is
// read back as it is, even after a refused turn of the master's thread.
import { describe, expect, it } from "vitest";
import { api, createConversation, send, turnMessages } from "./helpers";
import { resultText, toolResults } from "../blocks";

const regenerate = (id: string) => api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });

/** What conversation_read (over `from`..`to`) and memory_get (of message `id`) answer the model. */
async function modelReads(conv: string, range: { from: number; to: number }, id: string) {
  const read = await send(
    conv,
    `@tool conversation_read {"from_seq":${range.from},"to_seq":${range.to}}\n@tool memory_get {"id":"${id}"}`,
  );
  expect(read.status).toBe(200);
  const [listed, got] = toolResults(turnMessages(read)).map(resultText);
  return { listed, got };
}

describe("a regenerated refused turn", () => {
  for (const [name, patch] of [
    ["answered by another model", true],
    ["refused again", false],
  ] as const)
    it(`stays withheld from conversation_read and memory_get once its copy is ${name}`, async () => {
      const id = await createConversation();
      await send(id, "hello\n@reply-chars 60");
      const refused = await send(id, "The vault PIN is PLONKWIBBLE.\n@stop refusal cyber model=claude-sonnet-5-5");
      expect(refused.status).toBe(200);
      const [p, r] = refused.json.messages;
      expect(r.stopReason).toBe("refusal");
      if (patch) await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "claude-opus-5" } });
      const again = await regenerate(id);
      expect(again.status).toBe(200);
      expect(again.json.superseded).toMatchObject({ fromSeq: p.seq, toSeq: r.seq });

      const { listed, got } = await modelReads(id, { from: p.seq, to: r.seq }, r.id);
      expect(listed).not.toContain("PLONKWIBBLE");
      expect(listed).toContain("[withheld");
      expect(got).toContain("[withheld");
      const prompt = await modelReads(id, { from: p.seq, to: p.seq }, p.id);
      expect(prompt.got).not.toContain("PLONKWIBBLE");
      expect(prompt.got).toContain("[withheld");
    });

  it("reads back a superseded exchange that was not refused, after a refused turn", async () => {
    const id = await createConversation();
    await send(id, "The vault PIN is PLONKWIBBLE.\n@stop refusal cyber model=claude-sonnet-5-5");
    const ordinary = await send(id, "Name a lake, GRIBBLEMERE.\n@reply-chars 60");
    const [p, r] = ordinary.json.messages;
    expect((await regenerate(id)).status).toBe(200);
    const { listed, got } = await modelReads(id, { from: p.seq, to: r.seq }, p.id);
    expect(listed).toContain("GRIBBLEMERE");
    expect(listed).not.toContain("[withheld");
    expect(got).toContain("GRIBBLEMERE");
  });
});
