// A valid schedule whose next slot is further away than one search looks (five years): the
// automation keeps being searched from the horizon on, and runs in its slot.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage } from "../../services/automations";
import { createAutomation } from "./automation-helpers";
import { api, newTenant } from "./helpers";

const nextRunAt = async (id: string) =>
  (await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`).bind(id).first<{ n: string }>())!.n;
const slotsOf = async (id: string) =>
  (
    await env.DB.prepare(`SELECT slot FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
      .bind(id)
      .all<{ slot: string }>()
  ).results.map((r) => r.slot);

describe("a schedule whose next slot is more than five years away", () => {
  it("is searched again from the end of the search, runs nothing then, and runs in its slot", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "far" });
    // 29 February on a Sunday: the next after this test's clock (2026 or so) is 2032-02-29.
    const patched = await api("PATCH", `/v1/automations/${id}`, { schedule: "0 0 29 2 */7" }, { key });
    expect(patched.status).toBe(200);
    const resume = await nextRunAt(id);
    expect(resume).not.toMatch(/^9999/);
    expect(Date.parse(resume)).toBeLessThan(Date.parse("2032-02-29T00:00:00Z"));
    // The claim at the end of the search runs nothing and moves the next run on to the slot.
    await claimDuePage(env.DB, Date.parse(resume));
    expect(await slotsOf(id)).toEqual([]);
    expect(await nextRunAt(id)).toBe("2032-02-29T00:00:00.000Z");
    await claimDuePage(env.DB, Date.parse("2032-02-29T00:05:00Z"));
    expect(await slotsOf(id)).toEqual(["2032-02-29T00:00:00.000Z"]);
  });
});
