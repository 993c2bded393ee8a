// A fold's usage row reaches the ledger even when the summarizer's own D1 write of it would fail:
// the row travels with the commit RPC and the conversation's object meters it through its outbox
// (whose alarm retries), whether the fold applies, is refused as stale, or its answer is unusable.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api } from "./helpers";
import { leasedFold, scriptedReply, stubOf } from "./fold-scripted";

/** The summarizer's env with a D1 whose usage_events writes fail (the object's D1 is untouched). */
function usageWritesFail(): { env: Env; failed: () => number } {
  let failed = 0;
  const db = env.DB;
  const broken = new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare")
        return (sql: string) => {
          if (/usage_events/i.test(sql)) {
            failed++;
            throw new Error("D1 unavailable (injected)");
          }
          return target.prepare(sql);
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const summarizerEnv = new Proxy(env as Env, { get: (t, p) => (p === "DB" ? broken : Reflect.get(t, p)) });
  return { env: summarizerEnv, failed: () => failed };
}

async function foldRows(jobId: string): Promise<{ id: string; kind: string; i: number; o: number }[]> {
  const rows = await env.DB.prepare(
    `SELECT id, kind, input_tokens AS i, output_tokens AS o FROM usage_events WHERE substr(id, 1, ?) = ? ORDER BY id`,
  )
    .bind(`fold:${jobId}:`.length, `fold:${jobId}:`)
    .all<{ id: string; kind: string; i: number; o: number }>();
  return rows.results;
}

const SUMMARY = "The user walked through topics 0 to 5 of the flight plan; nothing is open.";

describe("a fold's usage row when the summarizer cannot write it to D1", () => {
  it("is kept for an applied fold: the commit carries it to the object's outbox", async () => {
    const job = await leasedFold();
    const broken = usageWritesFail();
    const { client } = scriptedReply(SUMMARY, "end_turn");
    expect(await runFoldJob(job, broken.env, { client, attempts: 2 })).toEqual({ applied: true, reason: "folded" });
    const rows = await foldRows(job.jobId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "fold", i: 1500, o: 40 });
    // The id stays per delivery: `fold:<job>:<delivery count>:<call id>`.
    expect(rows[0].id).toMatch(new RegExp(`^fold:${job.jobId}:2:call_`));
  });

  it("is kept when the commit is refused as stale: the call was paid for", async () => {
    const job = await leasedFold();
    const broken = usageWritesFail();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { client, calls } = scriptedReply(SUMMARY, "end_turn", { gate });
    const folding = runFoldJob(job, broken.env, { client, attempts: 1 });
    while (calls.length < 1) await new Promise((r) => setTimeout(r, 10));
    // Another job took the lease while the call ran (this one's lease expired and a turn dispatched).
    await runInDurableObject(stubOf(job.conversationId), async (_i, state) => {
      state.storage.sql.exec("UPDATE kv SET value = json_set(value, '$.jobId', 'fold_other') WHERE key = 'fold_lease'");
    });
    release();
    expect(await folding).toEqual({ applied: false, reason: "stale job: not the fold in flight" });
    expect((await api("GET", `/v1/conversations/${job.conversationId}`)).json.foldCount).toBe(0);
    const rows = await foldRows(job.jobId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "fold", i: 1500, o: 40 });
  });

  it("is kept for a refused answer, whose delivery fails and is retried", async () => {
    const job = await leasedFold();
    const broken = usageWritesFail();
    const { client } = scriptedReply("I can't help with that.", "refusal");
    await expect(runFoldJob(job, broken.env, { client, attempts: 1 })).rejects.toThrow(/refused/);
    const rows = await foldRows(job.jobId);
    expect(rows).toHaveLength(1);
    expect(rows[0].id).toMatch(new RegExp(`^fold:${job.jobId}:1:call_`));
    // The lease is untouched: the retry still holds it.
    expect((await api("GET", `/v1/conversations/${job.conversationId}`)).json.foldInFlight).toBe(true);
  });

  it("is kept once for a refused answer on the fallback delivery, with the fallback summary committed", async () => {
    const job = await leasedFold();
    const broken = usageWritesFail();
    const { client } = scriptedReply("I can't help with that.", "refusal");
    expect((await runFoldJob(job, broken.env, { client, attempts: 4 })).applied).toBe(true);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.summary).toMatch(/Written without the summarizer model/);
    const rows = await foldRows(job.jobId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "fold", i: 1500, o: 40 });
  });
});
