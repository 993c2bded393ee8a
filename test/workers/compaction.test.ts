// The in-turn safety net inside workerd: a monster turn compacts in memory (cards streamed, the
// stored transcript untouched), an overflow 400 forces one compaction and one retry, and the
// context-full guard ends a max_tokens loop that has no room left.
import { describe, expect, it } from "vitest";
import { api, createConversation, send, transcript, sendSseEvents } from "./helpers";
import { ofType, resultText } from "../blocks";

async function rowsFile(id: string) {
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
  const up = await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, lines, {
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  return up.json.id as string;
}

describe("the in-turn compactor", () => {
  it("compacts a monster turn in memory, streams the cards, and leaves the stored results whole", async () => {
    const id = await createConversation({ contextWindowTokens: 24_000, outputReserveTokens: 2_000 });
    const att = await rowsFile(id);
    const calls = Array.from(
      { length: 10 },
      (_, i) => `@tool file_read {"attachment_id":"${att}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
    ).join("\n");
    const events = await sendSseEvents(id, `read all ten slices\n${calls}`);
    const types = events.map((e) => e.type);
    expect(types).toContain("compaction_started");
    const card = events.find((e) => e.type === "compaction")!.data;
    expect(card.targets).toBeGreaterThan(0);
    expect(card.tokensSaved).toBeGreaterThan(0);
    expect(card.tokensAfter).toBeLessThan(card.tokensBefore);
    expect(card.details[0]).toMatchObject({
      kind: expect.any(String),
      before: expect.any(Number),
      after: expect.any(Number),
    });
    expect(types.indexOf("compaction_started")).toBeLessThan(types.indexOf("compaction"));
    // The rule-named twin follows each card at once (docs/api-notes.md, "Event names"), same payload.
    const at = types.indexOf("compaction");
    expect(types[at + 1]).toBe("compaction_finished");
    expect(events[at + 1].data).toEqual({ ...card, type: "compaction_finished" });
    expect(types.filter((t) => t === "compaction_finished").length).toBe(
      types.filter((t) => t === "compaction").length,
    );
    expect(types.at(-1)).toBe("turn_end");
    expect(ofType(events.at(-1)!.data, "turn_end").stop_reason).toBe("end_turn");
    const stored = (await transcript(id)).flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(stored).toHaveLength(10);
    expect(stored.every((b) => !/TRUNCATED/.test(resultText(b)) && resultText(b).length > 20_000)).toBe(true);

    // Observed: the corpus log of the day and the prompt snapshots.
    const today = new Date().toISOString().slice(0, 10);
    const corpus = await api("GET", `/v1/corpus/${today}`);
    expect(corpus.status).toBe(200);
    expect(corpus.text).toMatch(/compaction\.started[\s\S]*compaction\.applied/);
    expect(corpus.text).toContain(`conversation: ${id}`);
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snaps.length).toBeGreaterThanOrEqual(2);
    expect(snaps[0]).toMatchObject({ budgetTokens: 22_000, compacted: true });
    expect(snaps.at(-1)!.compacted).toBe(false);
    // The finished card stays in the timeline for History, never in what is replayed.
    const timeline = (await api("GET", `/v1/conversations/${id}/timeline`)).json.data;
    expect(timeline).toHaveLength(1);
    expect(timeline[0]).toMatchObject({
      type: "compaction",
      card: { type: "compaction", tokensSaved: card.tokensSaved },
    });
    expect(timeline[0].afterSeq).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify((await api("GET", `/v1/conversations/${id}/replay`)).json.messages)).not.toContain(
      "tokensSaved",
    );
    const body = await api("GET", `/v1/conversations/${id}/prompts/${snaps[0].id}`);
    expect(body.json.messages).toHaveLength(Number(snaps[0].messages));
    expect(JSON.stringify(body.json)).toContain("TRUNCATED");
  });

  it("carries a monster turn's batch ids into REMAINING: 40 results of 40 KB, each batch read exactly once", async () => {
    const id = await createConversation({
      model: "offline-64k",
      contextWindowTokens: 64_000,
      outputReserveTokens: 4_000,
    });
    const batches: string[] = [];
    for (let b = 0; b < 40; b++) {
      const body = Array.from({ length: 500 }, (_, i) => `batch ${b} row ${i} ${"measurement ".repeat(6)}`).join("\n");
      const up = await api("POST", `/v1/conversations/${id}/attachments?name=batch-${b}.txt`, body, {
        raw: true,
        headers: { "content-type": "text/plain" },
      });
      batches.push(up.json.id);
    }
    const calls = batches.map((att) => `@tool file_read {"attachment_id":"${att}","lines":"1-500"}`).join("\n");
    const events = await sendSseEvents(id, `Tally every batch: ${batches.join(", ")}.\n@tools-per-step 4\n${calls}`);
    const end = events.at(-1)!;
    expect(end.type).toBe("turn_end");
    expect(ofType(end.data, "turn_end").stop_reason).toBe("end_turn");

    // Every batch was read exactly once: nothing redone after a compaction, nothing dropped.
    const reads = events
      .filter((e) => e.type === "tool_use")
      .map((e) => (e.data.input as { attachment_id: string }).attachment_id);
    expect(reads).toEqual(batches);
    const results = events.filter((e) => e.type === "tool_result");
    expect(results.every((e) => e.data.chars >= 40_000 && !e.data.is_error)).toBe(true);

    // Compaction happened, and at the first one REMAINING named exactly the batches not yet read.
    const firstCompaction = events.findIndex((e) => e.type === "compaction_started");
    expect(firstCompaction).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === "compaction").length).toBeGreaterThanOrEqual(2);
    const readBefore = events.slice(0, firstCompaction).filter((e) => e.type === "tool_use").length;
    expect(readBefore).toBeGreaterThan(0);
    expect(readBefore).toBeLessThan(40);
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data.filter((p) => p.compacted).reverse();
    const request = (await api("GET", `/v1/conversations/${id}/prompts/${snaps[0].id}`)).json;
    const state = JSON.stringify(request.messages)
      .match(/<turn_state>(.*?)<\/turn_state>/)![1]
      .replace(/\\n/g, "\n");
    const remaining = state.slice(state.indexOf("REMAINING:"), state.indexOf("DATA:"));
    for (const att of batches.slice(readBefore)) expect(remaining).toContain(att);
    for (const att of batches.slice(0, readBefore)) expect(remaining).not.toContain(att);
    expect(remaining).toContain(`(${40 - readBefore} ids the task names)`);

    // The record is whole: all 40 results stored untruncated.
    const stored = (await transcript(id)).flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(stored).toHaveLength(40);
    expect(stored.every((b) => resultText(b).length >= 40_000 && !/TRUNCATED/.test(resultText(b)))).toBe(true);
  });

  it("keeps the newest 50 prompt snapshots, and the corpus route validates its date", async () => {
    const id = await createConversation();
    for (let i = 0; i < 53; i++) await send(id, `quick ${i}`);
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snaps).toHaveLength(50);
    expect(snaps[0].id).toBeGreaterThan(snaps[49].id);
    expect((await api("GET", `/v1/conversations/${id}/prompts/1`)).status).toBe(404);
    expect((await api("GET", "/v1/corpus/yesterday")).status).toBe(400);
    expect((await api("GET", "/v1/corpus/1999-01-01")).status).toBe(404);
    // A day that does not exist is a bad date, not a missing log.
    const impossible = await api("GET", "/v1/corpus/2024-02-30");
    expect(impossible.status).toBe(400);
    expect(impossible.json.error?.message).toBe("date: not a calendar day from 1970 on");
  });

  it("forces one compaction and one retry on a provider overflow 400, and reports a second overflow cleanly", async () => {
    // The conversation believes in a large window; the model's true one is 8,000 tokens.
    const id = await createConversation({ model: "offline-8k", contextWindowTokens: 200_000 });
    const att = await rowsFile(id);
    // Two 300-line reads overflow the true window on the call after their results. Each is larger
    // than the learned window's whole target, so even protected they are cut: exactly one forced
    // compaction, and the one retry fits.
    const events = await sendSseEvents(
      id,
      `@tool file_read {"attachment_id":"${att}","lines":"1-300"}\n@tool file_read {"attachment_id":"${att}","lines":"301-600"}`,
    );
    const started = events.filter((e) => e.type === "compaction_started");
    expect(started).toHaveLength(1);
    expect(started[0].data.forced).toBe(true);
    expect(ofType(events.at(-1)!.data, "turn_end").stop_reason).toBe("end_turn");
    const stored = (await transcript(id)).flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(stored.every((b) => !/TRUNCATED/.test(resultText(b)))).toBe(true);
    // A prompt that alone passes the true window cannot be cut (the newest prompts are protected):
    // one forced compaction, one retry that still overflows, and a clean context_overflow instead of a loop.
    const huge = await sendSseEvents(id, `${"lorem ipsum dolor sit amet ".repeat(2_000)}\nand now this`);
    expect(huge.filter((e) => e.type === "compaction_started")).toHaveLength(1);
    const end = huge.at(-1)!;
    expect(end.type).toBe("turn_end");
    expect(ofType(end.data, "turn_end").stop_reason).toBe("error");
    expect(huge.find((e) => e.type === "error")!.data.error.type).toBe("context_overflow");
  });

  it("learns the real window from the overflow 400, so the one retry fits where the settings overstated it", async () => {
    // Settings claim 200,000 tokens; the model takes 16,000. A pass aimed at the settings' target
    // would cut nothing (the estimate is far below it) and the retry would overflow again.
    const id = await createConversation({ model: "offline-16k", contextWindowTokens: 200_000 });
    const att = await rowsFile(id);
    const slices = (from: number) =>
      Array.from(
        { length: 6 },
        (_, i) => `@tool file_read {"attachment_id":"${att}","lines":"${from + i * 100}-${from + i * 100 + 99}"}`,
      ).join("\n");
    expect((await send(id, `first half\n${slices(1)}`)).json.stop_reason).toBe("end_turn");
    const events = await sendSseEvents(id, `second half\n${slices(601)}`);
    const forced = events.filter((e) => e.type === "compaction_started");
    expect(forced).toHaveLength(1);
    expect(forced[0].data.forced).toBe(true);
    expect(forced[0].data.budgetTokens).toBeLessThan(16_000);
    expect(events.find((e) => e.type === "error")).toBeUndefined();
    expect(ofType(events.at(-1)!.data, "turn_end").stop_reason).toBe("end_turn");
  });

  it("continues a max_tokens stop, but ends the turn when the input fills the window", async () => {
    const roomy = await createConversation();
    const r = await send(roomy, "write on\n@max-tokens-stop");
    expect(r.json.stop_reason).toBe("end_turn");
    expect(r.json.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
    // 4 chars per token keeps the compactor out of it: only the guard is under test here. The
    // smallest window there is (4,000 tokens) holds the fixed prompt, so the prompt brings ~3,000
    // tokens of its own to fill it.
    const full = await createConversation({
      contextWindowTokens: 4_000,
      outputReserveTokens: 64,
      compactTriggerRatio: 1,
      compactTargetRatio: 0.9,
      charsPerToken: 4,
    });
    const f = await send(full, `write on\n${"ember ".repeat(2_500)}\n@max-tokens-stop`);
    expect(f.json.stop_reason).toBe("context_full");
    expect(f.json.messages.filter((m) => m.role === "assistant")).toHaveLength(1);
  });
});
