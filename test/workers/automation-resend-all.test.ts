// A lost send can leave far more claimed runs unsent than one read returns (a claim page is 100
// automations of up to 15 slots each): every cron tick sends each of them again, once, until it
// starts or its 30 minutes are up. A tick that sent only the first 100 sent the same 100 again
// while they had not started, and the rest were closed as failed without ever being sent again.
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { resendUnsentRuns } from "../../services/automations";
import { runScheduled } from "../../workers/chat/scheduled";

const MIN = 60_000;
const RUNS = 700;

/**
 * `count` runs claimed at `queuedAt` and never started, as a claim whose send failed leaves them.
 * One statement (a counted series), so the rows cost one round trip.
 */
async function lostRuns({ label, count, queuedAt }: { label: string; count: number; queuedAt: number }) {
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts)
     SELECT printf('run_%s%06d', ?, i), 'aut_' || ?, 'tenant_resend', printf('%s-%06d', ?, i), 'queued', ?, 0 FROM n`,
  )
    .bind(count, label, label, label, new Date(queuedAt).toISOString())
    .run();
}

/** The automation queue as a spy: the run ids of every message each call sent, in order. */
function queueSpy() {
  const sent: string[] = [];
  const queue = {
    send: async () => {},
    sendBatch: async (messages: { body: { runId: string } }[]) => {
      sent.push(...messages.map((m) => m.body.runId));
    },
  };
  return { sent, env: { ...env, AUTOMATION_QUEUE: queue } as unknown as Env };
}

/** One cron tick at `at` with the spy for a queue: the run ids it sent. */
async function tickSending(at: number): Promise<string[]> {
  const spy = queueSpy();
  await runScheduled(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), spy.env);
  return spy.sent;
}

/** The runs' first delivery started them, at `at`. */
const markStarted = (runIds: string[], at: number) =>
  env.DB.prepare(
    `UPDATE automation_runs SET status = 'running', attempts = 1, started_at = ? WHERE id IN (SELECT value FROM json_each(?))`,
  )
    .bind(new Date(at).toISOString(), JSON.stringify(runIds))
    .run();

const statuses = async (label: string) =>
  (
    await env.DB.prepare(
      `SELECT status || COALESCE(': ' || error, '') AS s, COUNT(*) AS n FROM automation_runs WHERE automation_id = ? GROUP BY s ORDER BY s`,
    )
      .bind(`aut_${label}`)
      .all<{ s: string; n: number }>()
  ).results;

describe("the cron tick's resend of claimed runs whose queue message was lost", () => {
  it("sends every one of them again at the next tick, not a first page of them", async () => {
    const T = Date.parse("2041-04-04T10:00:00Z");
    await lostRuns({ label: "started", count: RUNS, queuedAt: T });
    const everSent = new Set<string>();
    for (let k = 1; k <= 7; k++) {
      const at = T + k * 5 * MIN;
      const sent = await tickSending(at);
      // No run twice in one tick.
      expect(new Set(sent).size).toBe(sent.length);
      for (const id of sent) everSent.add(id);
      // Each run sent starts at once, as it would once the queue delivers again.
      await markStarted(sent, at);
    }
    expect({ sentAgain: everSent.size, neverSentAgain: RUNS - everSent.size }).toEqual({
      sentAgain: RUNS,
      neverSentAgain: 0,
    });
    expect(await statuses("started")).toEqual([{ s: "running", n: RUNS }]);
  });

  it("sends each of them once every tick while none starts, until their 30 minutes are up", async () => {
    const T = Date.parse("2042-04-04T10:00:00Z");
    await lostRuns({ label: "waiting", count: RUNS, queuedAt: T });
    for (let k = 1; k <= 6; k++) {
      const sent = await tickSending(T + k * 5 * MIN);
      expect([sent.length, new Set(sent).size]).toEqual([RUNS, RUNS]);
    }
    expect(await tickSending(T + 35 * MIN)).toEqual([]);
    expect(await statuses("waiting")).toEqual([{ s: "failed: the run did not finish", n: RUNS }]);
  });

  it("sends at most its bound in one tick, the newest claims first, and says when some were left", async () => {
    const T = Date.parse("2043-04-04T10:00:00Z");
    await lostRuns({ label: "older", count: 300, queuedAt: T });
    await lostRuns({ label: "newer", count: 300, queuedAt: T + 5 * MIN });
    const spy = queueSpy();
    expect(await resendUnsentRuns(spy.env, T + 10 * MIN, { page: 100, max: 450 })).toEqual({ resent: 450, more: true });
    expect(new Set(spy.sent).size).toBe(450);
    expect(spy.sent.slice(0, 300).every((id) => id.startsWith("run_newer"))).toBe(true);
    expect(spy.sent.slice(300).every((id) => id.startsWith("run_older"))).toBe(true);
    // Exactly as many as the bound: nothing was left.
    const all = queueSpy();
    expect(await resendUnsentRuns(all.env, T + 10 * MIN, { page: 100, max: 600 })).toEqual({
      resent: 600,
      more: false,
    });
    expect(new Set(all.sent).size).toBe(600);
  });
});
