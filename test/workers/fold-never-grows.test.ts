// A fold replaces the previous summary and the folded messages with one new summary: it must never
// make the replay larger than what it replaced. With a threshold at its minimum and the default
// summaryMaxChars, the folded region weighs far less than the absolute cap, so the fold asks the
// model for no more than what it replaces, and the commit holds an overlong answer to that too.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { messageChars } from "../../core/render";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leasedFold, scriptedReply, stubOf } from "./fold-scripted";
import { api, inConversation, transcript } from "./helpers";

const replay = async (id: string) => (await api("GET", `/v1/conversations/${id}/replay`)).json;
const size = (r: { messages: unknown[] }) => JSON.stringify(r.messages).length;
// Chat exchanges and tool exchanges whose 3,000-char results the replay shows as stubs.
const chat = (n: number) => [
  { role: "user", content: `question ${n}` },
  { role: "assistant", content: `answer ${n}` },
];
const tool = (n: number) => [
  { role: "user", content: `read file ${n}` },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: `toolu_${n}`, name: "memory_search", input: { query: `file ${n}` } }],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${n}`, content: `${n % 10}`.repeat(3_000) }] },
  { role: "assistant", content: `file ${n} read` },
];
const LONG = "The user asked about topics; the assistant answered at length. ".repeat(90);

/** The cap the fold request's system prompt states ("at most N characters"). */
const askedCap = (call: unknown): number => {
  const system = (call as { system: { text: string }[] }).system.map((b) => b.text).join("\n");
  const m = /at most (\d+) characters/.exec(system);
  if (!m) throw new Error("no cap in the fold prompt");
  return Number(m[1]);
};

describe("a fold never grows the replay", () => {
  it("asks for at most what it replaces and commits no more than that", async () => {
    const job = await leasedFold({ foldThresholdChars: 1000 });
    const id = job.conversationId;
    const before = await replay(id);
    const { client, calls } = scriptedReply(LONG, "end_turn");
    const out = await runFoldJob(job, env as Env, { client });
    const after = await replay(id);
    expect(out.applied).toBe(true);
    expect(size(after)).toBeLessThanOrEqual(size(before));
    // The request asked for no more than the folded messages weigh (a first fold: no previous summary).
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    const through = meta.summarizedThroughMessage as number;
    const folded = (await transcript(id)).filter((m) => m.seq <= through);
    const foldedChars = folded.reduce((n, m) => n + messageChars(m), 0);
    expect(calls).toHaveLength(1);
    const cap = askedCap(calls[0]);
    expect(cap).toBeLessThan(6_000);
    expect(cap).toBeLessThanOrEqual(foldedChars);
    expect(meta.summary!.length).toBeGreaterThan(0);
    expect(meta.summary!.length).toBeLessThanOrEqual(cap);
  });

  it("holds a commit to the same cap, and the fallback summary within it", async () => {
    const job = await leasedFold({ foldThresholdChars: 1000 });
    const id = job.conversationId;
    const ref = { tenantId: job.tenantId, conversationId: id };
    const before = await replay(id);
    const source = await stubOf(id).foldSource(ref, job.jobId);
    expect(source?.plan).toBeTruthy();
    const { plan, region } = source!;
    const maxChars = source!.maxChars!;
    expect(maxChars).toBeLessThan(6_000);
    expect(source!.fallbackSummary!.length).toBeLessThanOrEqual(maxChars);
    // A commit past the cap (an older summarizer, a cap computed before the region changed) is cut to it.
    const boundary = region[plan!.cut];
    const out = await stubOf(id).commitFold(ref, {
      jobId: job.jobId,
      kind: "summary",
      summary: LONG,
      boundaryMessageId: boundary.id,
      boundarySeq: boundary.seq,
    });
    expect(out).toEqual({ applied: true, reason: "folded" });
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(meta.summary!.length).toBeGreaterThan(0);
    expect(meta.summary!.length).toBeLessThanOrEqual(maxChars);
    expect(size(await replay(id))).toBeLessThanOrEqual(size(before));
  });

  it("weighs the folded messages as the replay shows them: a stubbed result by its stub", async () => {
    const messages = [...chat(1), ...tool(1), ...tool(2), ...tool(3), ...chat(2), ...chat(3), ...chat(4), ...chat(5)];
    const imported = await api("POST", "/v1/conversations/import", { messages });
    expect(imported.status).toBe(201);
    const id = (imported.json as { id: string }).id;
    const before = await replay(id);
    // The results are stubbed in the replay before the fold: their 9,000 chars are not in it.
    expect(size(before)).toBeLessThan(9_000);
    await inConversation(id, (i) =>
      i.store.putLease({ jobId: "fold_x", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    );
    const { client, calls } = scriptedReply(
      "The user read files and the assistant summarised each of them in turn. ".repeat(100),
      "end_turn",
    );
    const job = { kind: "fold", jobId: "fold_x", tenantId: "dev", conversationId: id, requestedAt: "" } as const;
    const out = await runFoldJob(job, env as Env, { client });
    expect(out.applied).toBe(true);
    expect(size(await replay(id))).toBeLessThanOrEqual(size(before));
    expect(calls).toHaveLength(1);
    expect(askedCap(calls[0])).toBeLessThan(6_000);
  });
});
