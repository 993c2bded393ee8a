// A tenant the operator shut out (every key revoked through the admin routes) runs no automation:
// the claim records no run for it and no turn runs, while its automations stay and run again from
// the next slot once it has a key. A file of its own (an isolated workerd): the ticks claim every
// due automation, other files' included.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAutomation, HOUR, runsOf, settled, tick } from "./automation-helpers";
import { ADMIN, api, eventually, newTenantWithId } from "./helpers";

const runRows = async (automationId: string) =>
  (
    await env.DB.prepare(`SELECT slot, status FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
      .bind(automationId)
      .all<{ slot: string; status: string }>()
  ).results;

const usageRows = async (tenantId: string) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM usage_events WHERE tenant_id = ?`)
    .bind(tenantId)
    .first<{ n: number }>())!.n;

describe("a tenant shut out by the operator", () => {
  it("gets no automation run while it has no active key, and runs again once it has one", async () => {
    const shut = await newTenantWithId();
    const open = await newTenantWithId();
    const shutAuto = await createAutomation(shut.key, { channel: "shut-out" });
    const openAuto = await createAutomation(open.key, { channel: "still-open" });
    const keys = await api("GET", `/v1/admin/tenants/${shut.tenantId}/keys`, undefined, { key: ADMIN });
    for (const k of keys.json.data as { id: string }[]) {
      const r = await api("DELETE", `/v1/admin/tenants/${shut.tenantId}/keys/${k.id}`, undefined, { key: ADMIN });
      expect(r.status, r.text).toBe(200);
    }
    expect((await api("GET", "/v1/automations", undefined, { key: shut.key })).status).toBe(401);

    await tick(HOUR + 10 * 60_000);
    // The other tenant's automation ran: the tick did its work.
    const ran = await eventually(async () => {
      const r = await runsOf(openAuto, open.key);
      return settled(r) ? r : null;
    }, 20_000);
    expect(ran[0]).toMatchObject({ status: "succeeded", slot: new Date(HOUR).toISOString() });
    expect(await runRows(shutAuto)).toEqual([]);
    expect(await usageRows(shut.tenantId)).toBe(0);
    // The automation stays, its slot passed.
    const row = await env.DB.prepare(`SELECT next_run_at AS next FROM automations WHERE id = ?`)
      .bind(shutAuto)
      .first<{ next: string }>();
    expect(Date.parse(row!.next)).toBeGreaterThan(HOUR);

    // A key again: the next slot runs (the missed one does not come back).
    const made = await api("POST", `/v1/admin/tenants/${shut.tenantId}/keys`, { name: "back" }, { key: ADMIN });
    expect(made.status, made.text).toBe(201);
    const key = (made.json as { apiKey: string }).apiKey;
    await tick(HOUR + 3600_000 + 10 * 60_000);
    const back = await eventually(async () => {
      const r = await runsOf(shutAuto, key);
      return settled(r) ? r : null;
    }, 20_000);
    expect(back.map((r) => [r.slot, r.status])).toEqual([[new Date(HOUR + 3600_000).toISOString(), "succeeded"]]);
  });
});
