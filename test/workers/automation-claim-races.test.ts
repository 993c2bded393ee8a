// An automation edited between a claim page's read of the due rows and its claim statement: the
// claim is conditional on the row as read (not paused, the same schedule and next_run_at), so a
// paused or rescheduled automation gets no run for a slot it no longer has, while an edit that
// changes neither (a prompt, a name) leaves the slot claimed. A file of its own (an isolated
// workerd): claimDuePage claims every due automation, other files' included.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage } from "../../services/automations";
import { createAutomation } from "./automation-helpers";
import { api, newTenant } from "./helpers";

/** The worker's D1 with `edit` run after the page's read, just before the claim's batch. */
function editedBeforeClaim(edit: () => Promise<void>): D1Database {
  return new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch")
        return async (statements: D1PreparedStatement[]) => {
          await edit();
          return target.batch(statements);
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const slotsOf = async (id: string) =>
  (
    await env.DB.prepare(`SELECT slot, status FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
      .bind(id)
      .all<{ slot: string; status: string }>()
  ).results;

/** An hourly automation whose first slot (`hour`) is claimed, so its next slot is the next hour. */
async function hourly(hour: number, channel: string) {
  const key = await newTenant();
  const id = await createAutomation(key, { channel });
  await claimDuePage(env.DB, hour + 60_000, 100);
  expect((await slotsOf(id)).map((r) => r.slot)).toEqual([new Date(hour).toISOString()]);
  const patch = (body: Record<string, unknown>) => async () => {
    const r = await api("PATCH", `/v1/automations/${id}`, body, { key });
    expect(r.status, r.text).toBe(200);
  };
  return { id, key, patch };
}

describe("an automation edited between a tick's read of it and its claim", () => {
  it("gets no run for the old schedule's slot when rescheduled", async () => {
    const hour = Date.parse("2040-03-04T10:00:00Z");
    const { id, patch } = await hourly(hour, "race-schedule");
    const page = await claimDuePage(
      editedBeforeClaim(patch({ schedule: "30 2 * * *" })),
      hour + 3600_000 + 60_000,
      100,
    );
    expect(page.claimed).toBe(0);
    expect((await slotsOf(id)).map((r) => r.slot)).toEqual([new Date(hour).toISOString()]);
  });

  it("gets no run for the slot when paused", async () => {
    const hour = Date.parse("2040-03-05T10:00:00Z");
    const { id, patch } = await hourly(hour, "race-pause");
    const page = await claimDuePage(editedBeforeClaim(patch({ paused: true })), hour + 3600_000 + 60_000, 100);
    expect(page.claimed).toBe(0);
    expect((await slotsOf(id)).map((r) => r.slot)).toEqual([new Date(hour).toISOString()]);
  });

  it("still has the slot claimed when only its prompt or name changed", async () => {
    const hour = Date.parse("2040-03-06T10:00:00Z");
    const { id, patch } = await hourly(hour, "race-prompt");
    const page = await claimDuePage(
      editedBeforeClaim(patch({ prompt: "a new prompt", name: "renamed" })),
      hour + 3600_000 + 60_000,
      100,
    );
    expect(page.claimed).toBe(1);
    expect(await slotsOf(id)).toEqual([
      { slot: new Date(hour).toISOString(), status: "queued" },
      { slot: new Date(hour + 3600_000).toISOString(), status: "queued" },
    ]);
  });
});
