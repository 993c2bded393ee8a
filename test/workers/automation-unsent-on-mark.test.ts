// A claimed run whose queue message was lost is sent again by the first tick 5 minutes after its
// claim. The trigger ticks on the 5-minute marks (`*/5 * * * *`) and a run's queuedAt is its tick's
// time, so that tick is exactly 5 minutes later: a strict "older than 5 minutes" skipped it, and
// the run waited for the tick after (10 minutes late, not 5).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDueRuns, unsentRuns } from "../../services/automations";
import { createAutomation, runsOf, settled, tick } from "./automation-helpers";
import { eventually, newTenant } from "./helpers";

// A tick of the trigger (every 5 minutes, on the marks), in a year no other test's automation reaches.
const T = Date.parse("2039-03-03T10:00:00Z");
const MINUTES_5 = 5 * 60_000;

describe("a run whose queue message was lost at a tick on the trigger's marks", () => {
  it("is sent again by the next tick, 5 minutes after its claim, and runs", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "lost-on-mark" });
    const down = { send: async () => {}, sendBatch: async () => Promise.reject(new Error("queue unavailable")) };
    await expect(claimDueRuns({ ...env, AUTOMATION_QUEUE: down } as unknown as Env, T)).rejects.toThrow(
      /queue unavailable/,
    );
    const [run] = await runsOf(id, key);
    expect(run).toMatchObject({ status: "queued", attempts: 0 });
    expect((await unsentRuns(env.DB, T + MINUTES_5 - 1)).map((j) => j.runId)).not.toContain(run.id);
    expect((await unsentRuns(env.DB, T + MINUTES_5)).map((j) => j.runId)).toContain(run.id);
    await tick(T + MINUTES_5);
    const runs = await eventually(async () => {
      const r = await runsOf(id, key);
      return settled(r) ? r : null;
    }, 20_000);
    expect(runs[0]).toMatchObject({ id: run.id, status: "succeeded", attempts: 1 });
  });
});
