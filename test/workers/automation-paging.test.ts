// The cron tick reads only due automations, a bounded page per invocation (AUTOMATION_CLAIM_PAGE
// is 2 in these tests), and hands the rest of the tick to claim continuations on the automation
// queue: every due automation still runs once per slot, and the tick's own D1 work does not grow
// with the number of automations.
import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import chat from "../../workers/chat/index";
import { AUTOMATION_CLAIMS_QUEUE } from "../../workers/chat/automation-claims";
import { runScheduled } from "../../workers/chat/scheduled";
import { spyD1 } from "./d1-spy";
import { api, eventually, newTenant } from "./helpers";

// A slot no other test uses.
const HOUR = Date.parse("2033-03-03T03:00:00Z");

async function automations(key: string, n: number): Promise<string[]> {
  const ids = [];
  for (let i = 0; i < n; i++) {
    const r = await api(
      "POST",
      "/v1/automations",
      { name: `p${i}`, channel: "paging", prompt: "paged check-in", schedule: "0 * * * *" },
      { key },
    );
    expect(r.status).toBe(201);
    ids.push(r.json.id);
  }
  return ids;
}

/** One tick, its D1 statements on the automations tables counted. */
async function tick(at: number) {
  const spy = spyD1(env.DB);
  const result = await runScheduled(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), {
    ...env,
    DB: spy.db,
  } as Env);
  return { result, automationStatements: spy.direct.filter((q) => /\bautomation/.test(q)).length };
}

const runsFor = async (ids: string[], slot: number) =>
  (
    await env.DB.prepare(
      `SELECT automation_id AS a, COUNT(*) AS n FROM automation_runs WHERE slot = ? AND automation_id IN (${ids.map(() => "?").join(",")}) GROUP BY automation_id`,
    )
      .bind(new Date(slot).toISOString(), ...ids)
      .all<{ a: string; n: number }>()
  ).results;

describe("the cron tick's paging", () => {
  it("finds due automations through the automations_due index, not a scan", async () => {
    const plan = await env.DB.prepare(
      `EXPLAIN QUERY PLAN SELECT id, tenant_id, schedule FROM automations WHERE paused = 0 AND next_run_at <= ? ORDER BY next_run_at LIMIT 2`,
    )
      .bind(new Date(HOUR).toISOString())
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join("\n")).toMatch(
      /SEARCH automations USING INDEX automations_due \(paused=\? AND next_run_at<\?\)/,
    );
  });

  it("claims one page per invocation, continues through the queue until every due automation has its run, once", async () => {
    const key = await newTenant();
    const ids = await automations(key, 7);
    const first = await tick(HOUR + 60_000);
    expect(first.result).toMatchObject({ claimed: 2, continued: true });
    // The page read, two claims, two next slots, the sweep of abandoned runs and the read of unsent ones.
    expect(first.automationStatements).toBe(7);
    const runs = await eventually(async () => {
      const r = await runsFor(ids, HOUR);
      return r.length === ids.length ? r : null;
    }, 30_000);
    expect(runs.every((r) => r.n === 1)).toBe(true);
    // Every row now waits for its next slot: a later tick in the same hour finds nothing due.
    const again = await tick(HOUR + 10 * 60_000);
    expect(again.result).toMatchObject({ claimed: 0, continued: false });
    const late = await env.DB.prepare(
      `SELECT DISTINCT next_run_at AS n FROM automations WHERE id IN (${ids.map(() => "?").join(",")})`,
    )
      .bind(...ids)
      .all<{ n: string }>();
    expect(late.results).toEqual([{ n: new Date(HOUR + 3600_000).toISOString() }]);
  });

  it("does the same work per invocation with five times as many automations due", async () => {
    const small = await automations(await newTenant(), 3);
    const slot = HOUR + 5 * 3600_000;
    const few = await tick(slot + 60_000);
    await eventually(async () => (await runsFor(small, slot)).length === small.length, 30_000);
    const many = [...(await automations(await newTenant(), 15)), ...small];
    const next = slot + 3600_000;
    const lots = await tick(next + 60_000);
    expect(lots.automationStatements).toBe(few.automationStatements);
    expect(lots.result.claimed).toBe(few.result.claimed);
    await eventually(async () => (await runsFor(many, next)).length === many.length, 60_000);
  }, 90_000);

  it("a continuation claims a page of its own tick; a malformed one is dropped", async () => {
    const ids = await automations(await newTenant(), 3);
    const slot = HOUR + 9 * 3600_000;
    const batch = createMessageBatch<unknown>(AUTOMATION_CLAIMS_QUEUE, [
      { id: "c1", timestamp: new Date(), attempts: 1, body: { kind: "claim", scheduledTime: slot + 60_000 } },
      { id: "c2", timestamp: new Date(), attempts: 1, body: { kind: "claim", scheduledTime: "soon" } },
    ]);
    const ctx = createExecutionContext();
    await chat.queue(batch, env as Env);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["c1", "c2"]);
    // Two per invocation here: the first page is claimed at once, the rest by the continuation it sent.
    await eventually(async () => (await runsFor(ids, slot)).length === ids.length, 30_000);
  });
});
