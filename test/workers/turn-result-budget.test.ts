// One turn's tool results are bounded in the conversation object's memory: a continuation takes the
// turn's messages from the replay tail (never a second copy read from SQLite), and the results one
// turn may store are bounded (TURN_TOOL_RESULT_CHARS): past it a result is stored cut, with a note
// the model reads, and the turn goes on.
import { describe, expect, it } from "vitest";
import { toolResultText } from "../../core/render";
import type { StoredMessage, ToolResultBlock } from "../../core/types";
import { api, createConversation, inConversation, transcript } from "./helpers";

const clock = {
  name: "read_clock",
  description: "The client's clock",
  input_schema: { type: "object", properties: {} },
};
const bytesOf = (ms: readonly StoredMessage[]) => ms.reduce((n, m) => n + JSON.stringify(m.content).length, 0);
type Read = { a: number; b: number; bytes: number };
type Answer = { requires_action?: { calls: { id: string }[] }; turnId?: string };

/** A turn whose model asks `per` client calls a step, `steps` steps; paused on its first. */
async function clientLoop(per: number, steps: number) {
  const id = await createConversation();
  const prompt = [
    `@tools-per-step ${per}`,
    ...Array.from({ length: per * steps }, (_, n) => `@tool read_clock {"item":"job${n}"}`),
  ].join("\n");
  const r = await api("POST", `/v1/conversations/${id}/messages`, { content: prompt, tools: [clock] });
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  return { id, answer: r.json as Answer };
}

/** Posts `content` for every call the turn waits on; the turn's answer. */
async function postAll(id: string, answer: Answer, content: (n: number) => string): Promise<Answer> {
  const calls = answer.requires_action?.calls ?? [];
  expect(calls.length).toBeGreaterThan(0);
  const r = await api("POST", `/v1/conversations/${id}/tool-results`, {
    results: calls.map((c, n) => ({ tool_use_id: c.id, content: content(n) })),
  });
  expect(r.status, r.text.slice(0, 300)).toBe(200);
  return r.json as Answer;
}

const resultsOf = (ms: readonly StoredMessage[]): ToolResultBlock[] =>
  ms.flatMap((m) => m.content.filter((b): b is ToolResultBlock => b.type === "tool_result"));

describe("a turn's tool results in the conversation object", () => {
  it("a continuation takes the turn's messages from the replay tail, not from SQLite", async () => {
    const { id, answer } = await clientLoop(2, 4);
    const prompt = (await transcript(id)).find((m) => m.role === "user")!.seq;
    // Every store.range read: its seqs, and its messages' content in bytes.
    await inConversation(id, (i) => {
      const store = i.store as unknown as { range: (a: number, b: number) => StoredMessage[] };
      const real = store.range.bind(store);
      const g = globalThis as unknown as { budgetReads: Read[] };
      g.budgetReads = [];
      store.range = (a, b) => {
        const read = real(a, b);
        g.budgetReads.push({ a, b, bytes: bytesOf(read) });
        return read;
      };
    });
    const big = (n: number) => `${n}`.padEnd(50_000, "r");
    let next = await postAll(id, answer, big);
    next = await postAll(id, next, big);
    next = await postAll(id, next, big);
    expect(next.requires_action?.calls.length).toBe(2);
    const reads = await inConversation(id, () => (globalThis as unknown as { budgetReads: Read[] }).budgetReads);
    // No continuation read the turn again (from its prompt on); 300,000 chars of results are in the
    // turn by the last post, and no read held more than one post's (the index's read of what was
    // just saved is one post's).
    expect(reads.filter((r) => r.a <= prompt && r.b > prompt)).toEqual([]);
    expect(Math.max(0, ...reads.map((r) => r.bytes))).toBeLessThan(150_000);
    // The turn went on from the same messages: each step's results in order, whole.
    const results = resultsOf(await transcript(id));
    expect(results.map((r) => toolResultText(r).length)).toEqual(Array(6).fill(50_000));
  });

  it("stores a turn's tool results up to its budget; past it each is cut with a note the model reads", async () => {
    const { id, answer } = await clientLoop(2, 4);
    await inConversation(id, (i) => {
      const runner = (i as unknown as { intake: { runner: { resultBudgetChars: number } } }).intake.runner;
      expect(runner.resultBudgetChars).toBe(16 * 1024 * 1024);
      runner.resultBudgetChars = 120_000;
    });
    const big = (n: number) => `${n}`.padEnd(50_000, "r");
    let next = await postAll(id, answer, big);
    next = await postAll(id, next, big);
    // Past the budget: the turn goes on (the model asks its next step), nothing of it refused.
    expect(next.requires_action?.calls.length).toBe(2);
    next = await postAll(id, next, () => "a short answer");
    expect(next.requires_action?.calls.length).toBe(2);
    const results = resultsOf(await transcript(id));
    expect(results).toHaveLength(6);
    const texts = results.map(toolResultText);
    // The first post fits whole (100,000); of the second, 20,000 chars fit, then nothing does.
    expect(texts.slice(0, 2).map((t) => t.length)).toEqual([50_000, 50_000]);
    expect(texts[2].startsWith(big(0).slice(0, 20_000))).toBe(true);
    expect(texts[2]).not.toContain(big(0).slice(0, 20_001));
    expect(texts[2]).toContain("30,000 of this result's 50,000 chars were not stored");
    expect(texts[2]).toContain("120,000 chars");
    expect(results[2].is_error).toBeUndefined();
    expect(texts[3]).not.toContain("rrrr");
    expect(texts[3]).toContain("50,000 of this result's 50,000 chars were not stored");
    expect(results[3].is_error).toBe(true);
    expect(texts[4]).toContain("14 of this result's 14 chars were not stored");
    // What the turn stored of its results, the notes aside, is its budget.
    const notes = /\n*\[tool result cut:[^\]]*\]$/;
    expect(texts.reduce((n, t) => n + t.replace(notes, "").length, 0)).toBe(120_000);
    // The model is told: the next request carries the notes.
    const replay = await api("GET", `/v1/conversations/${id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.text).toContain("30,000 of this result's 50,000 chars were not stored");
    // A new turn has a budget of its own.
    expect((await postAll(id, next, () => "done")).requires_action).toBeUndefined();
    const prompt = ["@tools-per-step 2", ...[0, 1].map((n) => `@tool read_clock {"again":${n}}`)].join("\n");
    const again = await api("POST", `/v1/conversations/${id}/messages`, { content: prompt, tools: [clock] });
    expect((await postAll(id, again.json as Answer, big)).requires_action).toBeUndefined();
    expect(
      resultsOf(await transcript(id))
        .slice(-2)
        .map(toolResultText),
    ).toEqual([big(0), big(1)]);
  });

  it("holds the budget when a stop saves results a continuation could not take", async () => {
    const { id, answer } = await clientLoop(2, 2);
    await inConversation(id, (i) => {
      (i as unknown as { intake: { runner: { resultBudgetChars: number } } }).intake.runner.resultBudgetChars = 30_000;
      // The continuation's first read fails before anything of it is saved: the results are kept.
      const cache = i.cache as unknown as { promptContext: (...a: unknown[]) => Promise<unknown> };
      const real = cache.promptContext.bind(i.cache);
      let calls = 0;
      cache.promptContext = async (...a) => {
        if (calls++ === 0) throw new Error("injected: a storage blip");
        return real(...a);
      };
    });
    const calls = answer.requires_action?.calls ?? [];
    const big = (n: number) => `${n}`.padEnd(25_000, "s");
    const failed = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: calls.map((c, n) => ({ tool_use_id: c.id, content: big(n) })),
    });
    expect(failed.status).toBe(502);
    const stopped = await api("POST", `/v1/conversations/${id}/stop`, { turnId: answer.turnId });
    expect(stopped.status).toBe(200);
    const texts = resultsOf(await transcript(id)).map(toolResultText);
    expect(texts[0]).toBe(big(0));
    expect(texts[1].startsWith(big(1).slice(0, 5_000))).toBe(true);
    expect(texts[1]).toContain("20,000 of this result's 25,000 chars were not stored");
  });
});
