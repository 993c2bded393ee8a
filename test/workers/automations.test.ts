// Channels, rotation, automations and the cron trigger inside workerd. The trigger's runs go
// through the real automation queue to the chat worker's own consumer.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { channelObjectName } from "../../durable-objects/channel-do";
import { claimDuePage, claimDueRuns, MAX_AUTOMATIONS, unsentRuns, updateAutomation } from "../../services/automations";
import { createAutomation, HOUR, postAutomation, runsOf, settled, tick } from "./automation-helpers";
import { api, eventually, newTenant, send, transcript } from "./helpers";
import type { Usage } from "../../core/types";

describe("automations API", () => {
  it("creates, lists, patches, pauses, resumes and deletes, validating the schedule", async () => {
    const key = await newTenant();
    const bad = await postAutomation(key, { schedule: "every hour" });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/schedule: not a cron expression/);
    // A well-formed schedule that could never run is no syntax error: the refusal says only that it never runs.
    const never = await postAutomation(key, { schedule: "0 0 30 2 *" });
    expect(never.status).toBe(400);
    expect(never.json.error?.message).toContain("schedule: never runs: day 30 does not occur in month 2");
    expect((await postAutomation(key, { channel: "../etc" })).status).toBe(400);
    const id = await createAutomation(key, {});
    expect((await api("GET", "/v1/automations", undefined, { key })).json.data.map((a) => a.id)).toEqual([id]);
    expect((await api("PATCH", `/v1/automations/${id}`, { prompt: "new prompt" }, { key })).json.prompt).toBe(
      "new prompt",
    );
    expect((await api("POST", `/v1/automations/${id}/pause`, undefined, { key })).json.paused).toBe(true);
    expect((await api("POST", `/v1/automations/${id}/resume`, undefined, { key })).json.paused).toBe(false);
    const other = await newTenant();
    for (const [m, p, b] of [
      ["GET", ""],
      ["PATCH", "", { name: "mine" }],
      ["DELETE", ""],
      ["GET", "/runs"],
      ["POST", "/pause"],
    ] as const) {
      expect((await api(m, `/v1/automations/${id}${p}`, b, { key: other })).status, `${m} ${p}`).toBe(404);
    }
    expect((await api("DELETE", `/v1/automations/${id}`, undefined, { key })).status).toBe(204);
    expect((await api("GET", `/v1/automations/${id}`, undefined, { key })).status).toBe(404);
  });
});

describe("the automations cap", () => {
  it("refuses a tenant's automation past MAX_AUTOMATIONS with a 409, paused ones counted, and frees a place on delete", async () => {
    const key = await newTenant();
    const first = await createAutomation(key, { paused: true });
    const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
      .bind(first)
      .first<{ t: string }>())!.t;
    // All but one place taken (rows written directly: the cap is what is under test).
    const fill = Array.from({ length: MAX_AUTOMATIONS - 2 }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO automations (id, tenant_id, name, schedule, prompt, channel, paused, created_at, updated_at, next_run_at) VALUES (?, ?, 'f', '0 0 1 1 *', 'p', 'c', 1, 'x', 'x', '9999')`,
      ).bind(`auto_fill${String(i).padStart(21, "0")}${tenantId.slice(-5)}`, tenantId),
    );
    await env.DB.batch(fill);
    const last = await createAutomation(key, { paused: true });
    const over = await postAutomation(key);
    expect(over.status).toBe(409);
    expect(over.json.error).toEqual({
      type: "conflict",
      message: `the tenant has ${MAX_AUTOMATIONS} automations, the most it may have; delete one before creating another`,
    });
    // Another tenant is not held by it.
    expect((await postAutomation(await newTenant())).status).toBe(201);
    expect((await api("DELETE", `/v1/automations/${last}`, undefined, { key })).status).toBe(204);
    await createAutomation(key, { paused: true });
  });
});

describe("the cron trigger", () => {
  it("runs a due automation once per slot, even when the trigger fires twice, and records the run", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "ops" });
    const notDue = await createAutomation(key, { schedule: "0 9 * * *", channel: "ops" });
    await tick(HOUR + 10 * 60_000);
    await tick(HOUR + 10 * 60_000); // the same tick again
    await tick(HOUR + 15 * 60_000); // a later tick in the same hour: same slot
    const runs = (await eventually(async () => {
      const r = await runsOf(id, key);
      return settled(r) ? r : null;
    }, 20_000))!;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "succeeded", slot: new Date(HOUR).toISOString() });
    expect((runs[0].usage as Usage).output_tokens).toBeGreaterThan(0);
    const t = await transcript(String(runs[0].conversationId), key);
    expect(t[0].content[0]).toMatchObject({ type: "text", text: "hourly check-in" });
    expect(await runsOf(notDue, key)).toEqual([]);
  });

  it("isolates failures: a failing automation is retried by the queue, dead-lettered, recorded, and tried again next slot; the others run", async () => {
    const key = await newTenant();
    const failing = await createAutomation(key, { prompt: "please fail\n@model-error 529", channel: "flaky" });
    const healthy = await createAutomation(key, { channel: "steady" });
    const paused = await createAutomation(key, { channel: "quiet", paused: true });
    // A row whose schedule no longer parses must not stop the rest.
    await env.DB.prepare(
      `INSERT INTO automations (id, tenant_id, name, schedule, prompt, channel, paused, created_at, updated_at) VALUES ('auto_00000000000000000000000000', (SELECT tenant_id FROM automations WHERE id = ?), 'broken', 'not cron', 'p', 'c', 0, 'x', 'x')`,
    )
      .bind(healthy)
      .run();
    const slot2 = HOUR + 3 * 3600_000;
    await tick(slot2 + 60_000);
    const [f, h] = await Promise.all(
      [failing, healthy].map((id) =>
        eventually(async () => {
          const r = await runsOf(id, key);
          return settled(r) ? r : null;
        }, 30_000),
      ),
    );
    // Every delivery the queue allows (max_retries 2) was an attempt; its dead-letter queue closed it.
    expect(f![0]).toMatchObject({ status: "failed", attempts: 3 });
    expect(f![0].error).toMatch(/model_error.*529/);
    expect(h![0]).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(await runsOf(paused, key)).toEqual([]);
    // The next hour's slot tries again; the dead slot is not run again in between.
    await tick(slot2 + 5 * 60_000);
    await tick(slot2 + 3600_000 + 60_000);
    const again = (await eventually(async () => {
      const r = await runsOf(failing, key);
      return r.length === 2 && settled(r) ? r : null;
    }, 30_000))!;
    expect(again.map((r) => r.slot)).toEqual([new Date(slot2 + 3600_000).toISOString(), new Date(slot2).toISOString()]);
    await env.DB.prepare(`DELETE FROM automations WHERE id = 'auto_00000000000000000000000000'`).run();
  });

  it("closes runs that never finished instead of leaving them open", async () => {
    const key = await newTenant();
    const id = await createAutomation(key, {});
    const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ t: string }>())!.t;
    const old = new Date(Date.now() - 3600_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at) VALUES ('run_00000000000000000000000000', ?, ?, ?, 'running', ?)`,
    )
      .bind(id, tenantId, old, old)
      .run();
    await tick(Date.now());
    const runs = await runsOf(id, key);
    expect(runs.find((r) => r.id === "run_00000000000000000000000000")).toMatchObject({
      status: "failed",
      error: "the run did not finish",
    });
  });
  it("deletes an automation's recorded runs with it, and no other automation's", async () => {
    const key = await newTenant();
    const gone = await createAutomation(key, { channel: "ops" });
    const kept = await createAutomation(key, { channel: "ops" });
    await tick(HOUR + 10 * 60_000);
    await eventually(async () => {
      const [a, b] = [await runsOf(gone, key), await runsOf(kept, key)];
      return settled(a) && settled(b) ? true : null;
    }, 20_000);
    const count = async (id: string) =>
      (await env.DB.prepare(`SELECT count(*) AS n FROM automation_runs WHERE automation_id = ?`)
        .bind(id)
        .first<{ n: number }>())!.n;
    expect([await count(gone), await count(kept)]).toEqual([1, 1]);
    expect((await api("DELETE", `/v1/automations/${gone}`, undefined, { key })).status).toBe(204);
    expect([await count(gone), await count(kept)]).toEqual([0, 1]);
  });
});

describe("claims that go wrong", () => {
  const slotsOf = async (id: string) =>
    (
      await env.DB.prepare(`SELECT slot FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
        .bind(id)
        .all<{ slot: string }>()
    ).results.map((r) => r.slot);
  const tenantOf = async (id: string) =>
    (await env.DB.prepare(`SELECT tenant_id AS t FROM automations WHERE id = ?`).bind(id).first<{ t: string }>())!.t;
  const iso = (t: number) => new Date(t).toISOString();

  it("sends a claimed run again when its queue message was lost, so it still runs once", async () => {
    const slot = Date.parse("2034-02-02T10:00:00Z");
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "lost" });
    const down = { send: async () => {}, sendBatch: async () => Promise.reject(new Error("queue unavailable")) };
    await expect(claimDueRuns({ ...env, AUTOMATION_QUEUE: down } as unknown as Env, slot + 60_000)).rejects.toThrow(
      /queue unavailable/,
    );
    // The slot is claimed, so no later claim takes it; not yet sent again while it may still be on its way.
    expect(await runsOf(id, key)).toMatchObject([{ status: "queued", attempts: 0 }]);
    expect((await unsentRuns(env.DB, slot + 4 * 60_000)).map((j) => j.runId)).not.toContain(
      (await runsOf(id, key))[0].id,
    );
    await tick(slot + 7 * 60_000);
    const runs = (await eventually(async () => {
      const r = await runsOf(id, key);
      return settled(r) ? r : null;
    }, 20_000))!;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "succeeded", attempts: 1, slot: iso(slot) });
  });

  // The trigger ticks on the 5-minute marks and a run's queuedAt is its tick's time, so the tick
  // after a claim is exactly 5 minutes later: a strict "older than 5 minutes" skipped it, and the
  // run waited for the tick after that (10 minutes late, not 5).
  it("sends a run whose message was lost again at the next tick on the trigger's marks, 5 minutes after its claim", async () => {
    const T = Date.parse("2039-03-03T10:00:00Z");
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "lost-on-mark" });
    const down = { send: async () => {}, sendBatch: async () => Promise.reject(new Error("queue unavailable")) };
    await expect(claimDueRuns({ ...env, AUTOMATION_QUEUE: down } as unknown as Env, T)).rejects.toThrow(
      /queue unavailable/,
    );
    const [run] = await runsOf(id, key);
    expect(run).toMatchObject({ status: "queued", attempts: 0 });
    expect((await unsentRuns(env.DB, T + 5 * 60_000 - 1)).map((j) => j.runId)).not.toContain(run.id);
    expect((await unsentRuns(env.DB, T + 5 * 60_000)).map((j) => j.runId)).toContain(run.id);
    await tick(T + 5 * 60_000);
    const runs = (await eventually(async () => {
      const r = await runsOf(id, key);
      return settled(r) ? r : null;
    }, 20_000))!;
    expect(runs[0]).toMatchObject({ id: run.id, status: "succeeded", attempts: 1 });
  });

  it("keeps a schedule changed while a tick claims the row, instead of the old schedule's next slot", async () => {
    const at = Date.parse("2035-03-03T14:01:00Z");
    const key = await newTenant();
    const id = await createAutomation(key, { schedule: "0 0 1 1 *", channel: "race" });
    const tenantId = await tenantOf(id);
    // The change lands between the tick's page read and its batch.
    const db = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "batch")
          return async (statements: D1PreparedStatement[]) => {
            await updateAutomation(env.DB, { tenantId, id, change: { schedule: "0 * * * *" } });
            return target.batch(statements);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await claimDuePage(db, at);
    for (const h of [1, 2]) await claimDuePage(env.DB, at + h * 3600_000);
    // The new schedule's slots from the change (by the real clock) to this test's clock years later
    // are recorded skipped, as for a trigger stalled that long: the ones run are the ticks' own.
    const queued = await env.DB.prepare(
      `SELECT slot FROM automation_runs WHERE automation_id = ? AND status = 'queued' ORDER BY slot`,
    )
      .bind(id)
      .all<{ slot: string }>();
    expect(queued.results.map((r) => r.slot)).toEqual([1, 2].map((h) => iso(at - 60_000 + h * 3600_000)));
  });

  it("runs a changed or resumed schedule from its next slot, not one that passed before the change", async () => {
    const hour = Date.parse("2036-04-04T10:00:00Z");
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "edit" });
    await claimDuePage(env.DB, hour + 5 * 60_000);
    expect(await slotsOf(id)).toEqual([iso(hour)]);
    // The change moves the next run to the first :45 after it (by the real clock, not this test's hours).
    expect((await api("PATCH", `/v1/automations/${id}`, { schedule: "45 * * * *" }, { key })).status).toBe(200);
    const next = (await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ n: string }>())!.n;
    expect(Date.parse(next) - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(new Date(next).getUTCMinutes()).toBe(45);
    // Paused through a slot and resumed: that slot is not caught up either.
    expect((await api("POST", `/v1/automations/${id}/pause`, undefined, { key })).status).toBe(200);
    expect((await api("POST", `/v1/automations/${id}/resume`, undefined, { key })).status).toBe(200);
    const resumed = (await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ n: string }>())!.n;
    expect(Date.parse(resumed)).toBeGreaterThan(Date.now());
    // The same schedule again, or a resume of one not paused, leaves the next run where it was.
    await env.DB.prepare(`UPDATE automations SET next_run_at = '' WHERE id = ?`).bind(id).run();
    expect(
      (await api("PATCH", `/v1/automations/${id}`, { schedule: "45 * * * *", paused: false }, { key })).status,
    ).toBe(200);
    expect(
      (await env.DB.prepare(`SELECT next_run_at AS n FROM automations WHERE id = ?`).bind(id).first<{ n: string }>())!
        .n,
    ).toBe("");
  });
});

describe("channels", () => {
  it("keep their conversation while active and rotate after the idle time, keeping the old one", async () => {
    const key = await newTenant();
    const a = await api("POST", "/v1/channels/inbox/messages", { content: "first words on the channel" }, { key });
    const b = await api("POST", "/v1/channels/inbox/messages", { content: "second" }, { key });
    expect(a.status).toBe(200);
    expect(a.json.conversationId).toBe(b.json.conversationId);
    expect((await api("PATCH", "/v1/channels/inbox", { rotationSeconds: 60 }, { key })).json.rotationSeconds).toBe(60);

    // The edge, with an explicit clock: idle exactly the rotation time keeps it, one ms more rotates.
    const tenantId = (await env.DB.prepare(
      `SELECT tenant_id AS t FROM channels WHERE name = 'inbox' AND conversation_id = ?`,
    )
      .bind(a.json.conversationId)
      .first<{ t: string }>())!.t;
    const stub = env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, "inbox")));
    const t0 = Date.now() + 1000;
    const resolveAt = async (now: number) => {
      const place = await stub.resolve({ tenantId, name: "inbox", now });
      if ("refused" in place) throw new Error(place.refused);
      return place;
    };
    const first = await resolveAt(t0);
    expect(first.conversationId).toBe(a.json.conversationId);
    expect((await resolveAt(t0 + 60_000)).rotatedFrom).toBeNull();
    const rotated = await resolveAt(t0 + 120_001);
    expect(rotated.rotatedFrom).toBe(a.json.conversationId);
    expect(rotated.conversationId).not.toBe(a.json.conversationId);

    // The old conversation stays readable and searchable.
    expect((await transcript(a.json.conversationId, key)).length).toBe(4);
    await eventually(async () =>
      (await api("GET", "/v1/search?q=first%20words%20on%20the%20channel", undefined, { key })).json.data.some(
        (h) => h.conversationId === a.json.conversationId,
      ),
    );
    const view = (await api("GET", "/v1/channels/inbox", undefined, { key })).json;
    expect(view).toMatchObject({ conversationId: rotated.conversationId, rotations: 1, rotationSeconds: 60 });
  });

  it("count a reply, or a message added to the conversation, as activity: a follow-up after it stays", async () => {
    const key = await newTenant();
    const first = await api("POST", "/v1/channels/desk/messages", { content: "a long question" }, { key });
    expect((await api("PATCH", "/v1/channels/desk", { rotationSeconds: 3 }, { key })).status).toBe(200);
    // Longer than the rotation time since the channel carried a message, but the conversation was
    // active since: a message added to it directly (as a reply that ended late would be).
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await send(first.json.conversationId, "more on it", key)).status).toBe(200);
    const follow = await api("POST", "/v1/channels/desk/messages", { content: "and one more thing" }, { key });
    expect(follow.json.conversationId).toBe(first.json.conversationId);
    // Idle by both clocks: the next message starts a new conversation.
    await new Promise((r) => setTimeout(r, 5_000));
    const later = await api("POST", "/v1/channels/desk/messages", { content: "a new day" }, { key });
    expect(later.json.conversationId).not.toBe(first.json.conversationId);
  });

  it("resolves concurrent first messages to one conversation, and keeps tenants apart", async () => {
    const key = await newTenant();
    const rs = await Promise.all(
      Array.from({ length: 5 }, (_, i) => api("POST", "/v1/channels/burst/messages", { content: `m${i}` }, { key })),
    );
    expect(new Set(rs.map((r) => r.json.conversationId)).size).toBe(1);
    const other = await newTenant();
    const theirs = await api("POST", "/v1/channels/burst/messages", { content: "theirs" }, { key: other });
    expect(theirs.json.conversationId).not.toBe(rs[0].json.conversationId);
    expect((await api("GET", "/v1/channels", undefined, { key: other })).json.data.map((c) => c.name)).toEqual([
      "burst",
    ]);
    expect((await api("GET", "/v1/channels/nope", undefined, { key: other })).status).toBe(404);
  });

  it("deletes a channel: gone from the listing and its name, its conversation kept, the next message starts it afresh", async () => {
    const key = await newTenant();
    const other = await newTenant();
    const first = await api("POST", "/v1/channels/desk/messages", { content: "keep these words" }, { key });
    await api("POST", "/v1/channels/desk/messages", { content: "their own desk" }, { key: other });
    expect((await api("PATCH", "/v1/channels/desk", { rotationSeconds: 60 }, { key })).status).toBe(200);
    expect((await api("DELETE", "/v1/channels/desk", undefined, { key })).status).toBe(204);
    expect((await api("GET", "/v1/channels/desk", undefined, { key })).status).toBe(404);
    expect((await api("GET", "/v1/channels", undefined, { key })).json.data).toEqual([]);
    const again = await api("DELETE", "/v1/channels/desk", undefined, { key });
    expect(again.status).toBe(404);
    expect(again.json?.error?.type).toBe("not_found");
    // The conversation is the tenant's as before; another tenant's channel of that name is untouched.
    const kept = await transcript(first.json.conversationId, key);
    expect(JSON.stringify(kept)).toContain("keep these words");
    expect((await api("GET", "/v1/channels/desk", undefined, { key: other })).status).toBe(200);
    const next = await api("POST", "/v1/channels/desk/messages", { content: "a fresh start" }, { key });
    expect(next.status).toBe(200);
    expect(next.json.conversationId).not.toBe(first.json.conversationId);
    const view = (await api("GET", "/v1/channels/desk", undefined, { key })).json;
    expect(view).toMatchObject({ conversationId: next.json.conversationId, rotations: 0 });
    expect(view.rotationSeconds).not.toBe(60);
  });
});
