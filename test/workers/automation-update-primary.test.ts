// A resume, or a changed schedule, decides from the automation as the primary holds it, and writes
// only while the row is still as read: a client's bookmark may start the request's D1 session on a
// replica that has not seen a later pause or reschedule (a stale "not paused" would skip the reset
// of next_run_at, and the next tick would catch up the slots that passed while paused; a stale
// schedule would drop a real change as "the same"), and a pause may land between the read and the
// write.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage, updateAutomation } from "../../services/automations";
import { app } from "../../workers/chat/app";
import { createAutomation } from "./automation-helpers";
import { freeze, frozenReplica } from "./lagging-replica";
import { api, newTenant } from "./helpers";

/** A request through the app whose session starts at `bookmark` on the frozen replica. */
async function callStale(request: { method: string; path: string; key: string; bookmark: string; body?: unknown }) {
  const { method, path, key, bookmark, body } = request;
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-d1-bookmark": bookmark },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, DB: frozenReplica(env.DB, "automations") } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const stored = (id: string) =>
  env.DB.prepare("SELECT schedule, next_run_at AS nextRunAt, paused FROM automations WHERE id = ?")
    .bind(id)
    .first<{ schedule: string; nextRunAt: string; paused: number }>();

/** The automation's next_run_at as if the trigger last claimed it `minutes` ago. */
const lastClaimedAgo = (id: string, minutes: number) =>
  env.DB.prepare("UPDATE automations SET next_run_at = ? WHERE id = ?")
    .bind(new Date(Date.now() - minutes * 60_000).toISOString(), id)
    .run();

const queuedRuns = async (id: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM automation_runs WHERE automation_id = ? AND status = 'queued'")
    .bind(id)
    .first<{ n: number }>())!.n;

describe("an automation's update, decided at the primary", () => {
  it("resumes from the next slot when the session's replica has not seen the pause", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { schedule: "* * * * *", channel: "resume-stale" });
    await freeze("automations"); // the replica saw it running
    const paused = await api("POST", `/v1/automations/${id}/pause`, undefined, { key });
    expect(paused.status).toBe(200);
    const bookmark = paused.headers.get("x-d1-bookmark") ?? "";
    await lastClaimedAgo(id, 40); // paused for 40 minutes
    const resumed = await callStale({ method: "POST", path: `/v1/automations/${id}/resume`, key, bookmark });
    expect(resumed.status, JSON.stringify(resumed.json)).toBe(200);
    expect(resumed.json.paused).toBe(false);
    expect(Date.parse((await stored(id))!.nextRunAt)).toBeGreaterThan(Date.now() - 60_000);
    const { claimed } = await claimDuePage(env.DB, Date.now() + 60_000, 100);
    expect(claimed).toBeLessThanOrEqual(2);
    expect(await queuedRuns(id)).toBeLessThanOrEqual(2);
  });

  it("keeps a schedule sent that the session's replica holds already but the primary no longer does", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { schedule: "0 * * * *", channel: "schedule-stale" });
    await freeze("automations");
    const moved = await api("PATCH", `/v1/automations/${id}`, { schedule: "30 * * * *" }, { key });
    expect(moved.status).toBe(200);
    const bookmark = moved.headers.get("x-d1-bookmark") ?? "";
    const back = await callStale({
      method: "PATCH",
      path: `/v1/automations/${id}`,
      key,
      bookmark,
      body: { schedule: "0 * * * *" },
    });
    expect(back.status, JSON.stringify(back.json)).toBe(200);
    expect(back.json.schedule).toBe("0 * * * *");
    const row = (await stored(id))!;
    expect(row.schedule).toBe("0 * * * *");
    expect(new Date(row.nextRunAt).getUTCMinutes()).toBe(0);
  });

  it("decides again when a pause lands between its read and its write", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { schedule: "* * * * *", channel: "resume-race" });
    const tenantId = (await env.DB.prepare("SELECT tenant_id AS t FROM automations WHERE id = ?")
      .bind(id)
      .first<{ t: string }>())!.t;
    await lastClaimedAgo(id, 40);
    // The resume reads it running; a pause lands just before the resume's write.
    let landed = false;
    const pauseFirst =
      <T>(run: () => Promise<T>) =>
      async (): Promise<T> => {
        if (!landed) {
          landed = true;
          await updateAutomation(env.DB, { tenantId, id, change: { paused: true } });
        }
        return run();
      };
    const intercept = (prepare: (q: string) => D1PreparedStatement) => (q: string) => {
      const stmt = prepare(q);
      if (!/^update "automations"/i.test(q)) return stmt;
      return new Proxy(stmt, {
        get(s, p) {
          if (p !== "bind") return Reflect.get(s, p).bind(s);
          return (...values: unknown[]) => {
            const bound = s.bind(...values);
            return new Proxy(bound, {
              get(b, m) {
                const value = Reflect.get(b, m);
                if (typeof value !== "function") return value;
                if (m === "all" || m === "raw" || m === "run" || m === "first")
                  return (...args: unknown[]) => pauseFirst(() => value.apply(b, args))();
                return value.bind(b);
              },
            });
          };
        },
      });
    };
    const racing = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare") return intercept((q) => target.prepare(q));
        if (prop === "withSession")
          return (start?: string) => {
            const session = target.withSession(start);
            return new Proxy(session, {
              get(s, p) {
                if (p === "prepare") return intercept((q) => s.prepare(q));
                return Reflect.get(s, p).bind(s);
              },
            });
          };
        return Reflect.get(target, prop).bind(target);
      },
    });
    const resumed = await updateAutomation(racing, { tenantId, id, change: { paused: false } });
    expect(landed).toBe(true);
    expect(resumed).toMatchObject({ id, paused: false });
    expect(Date.parse((await stored(id))!.nextRunAt)).toBeGreaterThan(Date.now() - 60_000);
    await claimDuePage(env.DB, Date.now() + 60_000, 100);
    expect(await queuedRuns(id)).toBeLessThanOrEqual(2);
  });
});
