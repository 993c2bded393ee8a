// Schedules whose slots come faster than the cron trigger (every 5 minutes): each tick claims every
// slot due since the last one, so no slot is lost, and a slot is claimed once whatever the ticks.
// A file of its own (an isolated workerd): its claims at a clock years ahead would take other
// files' automations.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage, MAX_SLOTS_PER_TICK, MAX_STALLED_SLOTS } from "../../services/automations";
import { createAutomation } from "./automation-helpers";
import { api, newTenant } from "./helpers";

const runsOf = async (id: string) =>
  (
    await env.DB.prepare(`SELECT slot, status, error FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
      .bind(id)
      .all<{ slot: string; status: string; error: string | null }>()
  ).results;

/** Every minute from `from` to `to` (inclusive) whose minute of the hour `keep` accepts, as ISO. */
const minutes = (from: number, to: number, keep: (minute: number) => boolean) => {
  const out: string[] = [];
  for (let t = from; t <= to; t += 60_000) if (keep(new Date(t).getUTCMinutes())) out.push(new Date(t).toISOString());
  return out;
};

/** The trigger's ticks at each 5-minute mark from `from` to `to`; the runs each claimed. */
async function tickEvery5Minutes(from: number, to: number) {
  const claimed: number[] = [];
  for (let t = from; t <= to; t += 5 * 60_000) claimed.push((await claimDuePage(env.DB, t, 100)).claimed);
  return claimed;
}

describe("a schedule with slots less than 5 minutes apart, or not on the trigger's marks", () => {
  it("has every slot of an hour claimed once, by ticks at each 5-minute mark", async () => {
    const key = await newTenant();
    const everySeventh = await createAutomation(key, { channel: "fast-7", schedule: "*/7 * * * *" });
    const everyMinute = await createAutomation(key, { channel: "fast-1", schedule: "* * * * *" });
    const hour = Date.parse("2037-04-05T10:00:00Z");
    const claimed = await tickEvery5Minutes(hour, hour + 60 * 60_000);
    // A tick repeated (a duplicate invocation, a continuation) claims nothing again.
    expect((await claimDuePage(env.DB, hour + 60 * 60_000, 100)).claimed).toBe(0);

    const sevenths = minutes(hour, hour + 60 * 60_000, (m) => m % 7 === 0);
    expect(sevenths).toContain("2037-04-05T10:56:00.000Z");
    const seventhRuns = await runsOf(everySeventh);
    expect(seventhRuns.map((r) => r.slot)).toEqual(sevenths);
    expect(seventhRuns.every((r) => r.status === "queued")).toBe(true);

    const allMinutes = minutes(hour, hour + 60 * 60_000, () => true);
    expect(allMinutes).toHaveLength(61);
    const minuteRuns = await runsOf(everyMinute);
    expect(minuteRuns.map((r) => r.slot)).toEqual(allMinutes);
    expect(minuteRuns.every((r) => r.status === "queued")).toBe(true);

    // The ticks' claims add up to the runs: each tick's jobs are the runs it added.
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(sevenths.length + allMinutes.length);
    // Nothing of this test is due at the next one's clock.
    for (const id of [everySeventh, everyMinute]) await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });

  it("after a stalled trigger, runs the latest slots up to the bound and records the older ones skipped", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "fast-stalled", schedule: "* * * * *" });
    const hour = Date.parse("2037-06-07T10:00:00Z");
    expect((await claimDuePage(env.DB, hour, 100)).claimed).toBe(1);
    // No tick for 40 minutes: 40 slots are owed at once.
    const late = await claimDuePage(env.DB, hour + 40 * 60_000, 100);
    expect(late.claimed).toBe(MAX_SLOTS_PER_TICK);
    expect(late.statements).toBe(3); // the page, one claim and one next slot: not one per slot
    const runs = await runsOf(id);
    expect(runs.map((r) => r.slot)).toEqual(minutes(hour, hour + 40 * 60_000, () => true));
    const skipped = runs.slice(1, 41 - MAX_SLOTS_PER_TICK);
    expect(skipped.every((r) => r.status === "skipped" && /more slots were due at once/.test(String(r.error)))).toBe(
      true,
    );
    expect(runs.slice(41 - MAX_SLOTS_PER_TICK).every((r) => r.status === "queued")).toBe(true);
    // The next tick on time owes the 5 slots since.
    expect((await claimDuePage(env.DB, hour + 45 * 60_000, 100)).claimed).toBe(5);
    await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });
});

describe("a trigger stalled for over an hour", () => {
  const STALLED = /^the trigger did not run for over an hour after this slot \(a slot is run at most 60 minutes late\)/;

  it("records every slot older than the lookback skipped, saying the trigger stalled", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "stalled-2h", schedule: "* * * * *" });
    const hour = Date.parse("2038-06-07T10:00:00Z");
    expect((await claimDuePage(env.DB, hour, 100)).claimed).toBe(1);
    // No tick for two hours: 10:01 to 12:00 are owed, 10:01 to 10:59 before the hour a slot may run late.
    const late = await claimDuePage(env.DB, hour + 120 * 60_000, 100);
    expect(late.claimed).toBe(MAX_SLOTS_PER_TICK);
    expect(late.statements).toBe(3);
    const runs = await runsOf(id);
    expect(runs.map((r) => r.slot)).toEqual(minutes(hour, hour + 120 * 60_000, () => true));
    const stalled = runs.slice(1, 60);
    expect(stalled.every((r) => r.status === "skipped" && STALLED.test(String(r.error)))).toBe(true);
    expect(stalled.some((r) => /not recorded/.test(String(r.error)))).toBe(false);
    const pastBound = runs.slice(60, 121 - MAX_SLOTS_PER_TICK);
    expect(pastBound.every((r) => r.status === "skipped" && /more slots were due at once/.test(String(r.error)))).toBe(
      true,
    );
    expect(runs.slice(121 - MAX_SLOTS_PER_TICK).every((r) => r.status === "queued")).toBe(true);
    await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });

  it("records a daily slot the trigger missed by over an hour, and moves on to the next day", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "stalled-daily", schedule: "0 9 * * *" });
    const day = Date.parse("2038-07-07T00:00:00Z");
    // The tick at 08:50 (the first claim: nothing due, next_run_at goes to 09:00), then none until 10:05.
    await claimDuePage(env.DB, day + 8 * 3600_000 + 50 * 60_000, 100);
    await claimDuePage(env.DB, day + 10 * 3600_000 + 5 * 60_000, 100);
    const runs = await runsOf(id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ slot: "2038-07-07T09:00:00.000Z", status: "skipped" });
    expect(runs[0].error).toMatch(STALLED);
    const listed = (await api("GET", `/v1/automations/${id}/runs`, undefined, { key })).json.data;
    expect(listed).toMatchObject([{ slot: "2038-07-07T09:00:00.000Z", status: "skipped", prompt: null }]);
    const next = await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ n: string }>();
    expect(next?.n).toBe("2038-07-08T09:00:00.000Z");
    await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });

  it("lists the runs of a stall newest first, by slot", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "stalled-order", schedule: "*/20 * * * *" });
    const hour = Date.parse("2038-09-10T10:00:00Z");
    await claimDuePage(env.DB, hour, 100);
    // Three hours: 10:20 to 11:40 are before the lookback (recorded skipped), 12:00 to 13:00 in it.
    await claimDuePage(env.DB, hour + 180 * 60_000, 100);
    const listed = (await api("GET", `/v1/automations/${id}/runs?limit=100`, undefined, { key })).json.data;
    const slots = minutes(hour, hour + 180 * 60_000, (m) => m % 20 === 0);
    expect(slots).toHaveLength(10);
    // The runs list newest first by id: the ids follow the slots, the stalled ones' included.
    expect(listed.map((r: { slot: string }) => r.slot)).toEqual([...slots].reverse());
    await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });

  it("records at most MAX_STALLED_SLOTS of them, the earliest, the last saying where the rest end", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "stalled-3h", schedule: "* * * * *" });
    const hour = Date.parse("2038-08-09T10:00:00Z");
    await claimDuePage(env.DB, hour, 100);
    // Three hours: 10:01 to 11:59 are before the lookback (119 slots), 12:00 to 13:00 in it.
    await claimDuePage(env.DB, hour + 180 * 60_000, 100);
    const runs = await runsOf(id);
    const stalled = runs.filter((r) => STALLED.test(String(r.error)));
    expect(stalled.map((r) => r.slot)).toEqual(minutes(hour + 60_000, hour + MAX_STALLED_SLOTS * 60_000, () => true));
    expect(stalled.slice(0, -1).every((r) => !/not recorded/.test(String(r.error)))).toBe(true);
    expect(stalled.at(-1)?.error).toMatch(/later slots up to 2038-08-09T12:00:00\.000Z \(not included\).*not recorded/);
    // The lookback's 61 slots: 15 run, the older 46 skipped past the bound.
    expect(runs).toHaveLength(1 + MAX_STALLED_SLOTS + 61);
    expect(runs.filter((r) => r.status === "queued")).toHaveLength(1 + MAX_SLOTS_PER_TICK);
    await api("DELETE", `/v1/automations/${id}`, undefined, { key });
  });
});
