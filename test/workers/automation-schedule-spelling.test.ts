// The same schedule in another spelling is the same schedule: it is stored in one spelling, and a
// PATCH that sends it again (extra spaces, an @name's case, or @hourly for "0 * * * *") changes
// nothing, so a due slot stays due.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage } from "../../services/automations";
import { createAutomation, postAutomation, runsOf } from "./automation-helpers";
import { api, newTenant } from "./helpers";

const nextRunAt = async (id: string) =>
  (await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`).bind(id).first<{ n: string }>())!.n;

describe("a schedule's spelling", () => {
  it("is stored normalized: trimmed, single spaces, an @name in lower case", async () => {
    const key = await newTenant();
    const spaced = await postAutomation(key, { schedule: "  0   9 * *\tMON ", channel: "spell-a" });
    expect(spaced.status).toBe(201);
    expect(spaced.json.schedule).toBe("0 9 * * MON");
    const named = await postAutomation(key, { schedule: " @HOURLY ", channel: "spell-b" });
    expect(named.status).toBe(201);
    expect(named.json.schedule).toBe("@hourly");
  });

  it("sent again in another spelling loses no due slot", async () => {
    const key = await newTenant();
    const same = await createAutomation(key, { schedule: "* * * * *", channel: "spell-same" });
    const spaced = await createAutomation(key, { schedule: "* * * * *", channel: "spell-spaced" });
    const p1 = await api("PATCH", `/v1/automations/${same}`, { schedule: "* * * * *" }, { key });
    const p2 = await api("PATCH", `/v1/automations/${spaced}`, { schedule: "*  * * * *" }, { key });
    expect([p1.status, p2.status]).toEqual([200, 200]);
    await claimDuePage(env.DB, Date.now(), 500);
    const a = (await runsOf(same, key)).length;
    expect(a).toBe(1);
    expect((await runsOf(spaced, key)).length).toBe(a);
    expect(p2.json.schedule).toBe("* * * * *");
  });

  it("@hourly and 0 * * * * are the same schedule: the next slot stays, and so does the stored spelling", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { schedule: "@hourly", channel: "spell-hourly" });
    const before = await nextRunAt(id);
    const p = await api("PATCH", `/v1/automations/${id}`, { schedule: "0 * * * *" }, { key });
    expect(p.status).toBe(200);
    expect(p.json.schedule).toBe("@hourly");
    expect(await nextRunAt(id)).toBe(before);
    // A schedule that differs still moves the next slot.
    const q = await api("PATCH", `/v1/automations/${id}`, { schedule: "5 * * * *" }, { key });
    expect(q.json.schedule).toBe("5 * * * *");
    expect(await nextRunAt(id)).not.toBe(before);
  });
});
