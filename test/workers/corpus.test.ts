// The brain/ layout: corpus events roll up into one log per closed UTC day (by the cron
// trigger), prompt snapshots live under brain/prefrontal/.debug/ per conversation. A day not yet
// rolled up is read from its event objects, one R2 get each: one read fetches a bounded number of
// them (within an invocation's subrequests) and, past that bound, ends with a line saying how many
// events it left out and when the roll-up has them; it never stops silently.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sortableId } from "../../core/ids";
import { corpusEventKey, corpusEventPrefix, corpusLogKey, promptSnapshotPrefix } from "../../r2-layout";
import chat from "../../workers/chat/index";
import { logCorpusEvent, readCorpusDay, rollUpCorpusDays } from "../../services/corpus";
import { ADMIN, api, createConversation, newTenantWithId, send } from "./helpers";
import { limitedBucket } from "./limited-bucket";

const DAY_MS = 86_400_000;

async function tenant(): Promise<{ id: string; key: string }> {
  const r = await api("POST", "/v1/admin/tenants", { name: `corpus-${crypto.randomUUID()}` }, { key: ADMIN });
  return { id: r.json.tenant.id, key: r.json.apiKey };
}

const listed = async (prefix: string) => (await env.BUCKET.list({ prefix })).objects.map((o) => o.key);
const pending = async (tenantId: string) =>
  (
    await env.DB.prepare(`SELECT day FROM corpus_days WHERE tenant_id = ? ORDER BY day`)
      .bind(tenantId)
      .all<{ day: string }>()
  ).results.map((r) => r.day);

describe("the corpus log", () => {
  it("rolls a closed day into brain/corpus/YYYY-MM-DD.log.md on the cron tick, and serves the same text", async () => {
    const t = await tenant();
    const now = Date.now();
    const past = new Date(now - 2 * DAY_MS);
    const day = past.toISOString().slice(0, 10);
    const today = new Date(now).toISOString().slice(0, 10);
    await logCorpusEvent(env, {
      tenantId: t.id,
      event: "compaction.started",
      fields: { conversation: "conv_a", tokens: 100 },
      at: past,
    });
    await logCorpusEvent(env, {
      tenantId: t.id,
      event: "compaction.applied",
      fields: { conversation: "conv_a", saved: 60 },
      at: new Date(past.getTime() + 1000),
    });
    await logCorpusEvent(env, {
      tenantId: t.id,
      event: "fold.applied",
      fields: { conversation: "conv_b" },
      at: new Date(now),
    });
    expect(await pending(t.id)).toEqual([day, today]);

    const before = await api("GET", `/v1/corpus/${day}`, undefined, { key: t.key });
    expect(before.status).toBe(200);
    expect(before.text).toMatch(
      /^# Corpus log \d{4}-\d{2}-\d{2}\n\n## [^\n]+compaction\.started[\s\S]+compaction\.applied/,
    );

    const controller = createScheduledController({ scheduledTime: now, cron: "*/5 * * * *" });
    const ctx = createExecutionContext();
    await chat.scheduled!(controller, env as Env, ctx);
    await waitOnExecutionContext(ctx);

    // The closed day is one object now; today's events stay as they are until today closes.
    expect(await listed(corpusEventPrefix(t.id, day))).toEqual([]);
    expect(await (await env.BUCKET.get(corpusLogKey(t.id, day)))!.text()).toBe(before.text);
    expect(corpusLogKey(t.id, day)).toBe(`tenants/${t.id}/brain/corpus/${day}.log.md`);
    expect(await pending(t.id)).toEqual([today]);
    expect(await listed(corpusEventPrefix(t.id, today))).toHaveLength(1);
    expect((await api("GET", `/v1/corpus/${day}`, undefined, { key: t.key })).text).toBe(before.text);
    // Another tenant sees neither day.
    expect((await api("GET", `/v1/corpus/${day}`)).status).toBe(404);
  });

  it("finishes an interrupted roll-up without rewriting the log", async () => {
    const t = await tenant();
    const past = new Date(Date.now() - 3 * DAY_MS);
    const day = past.toISOString().slice(0, 10);
    await logCorpusEvent(env, {
      tenantId: t.id,
      event: "compaction.applied",
      fields: { conversation: "conv_c" },
      at: past,
    });
    // The log was written, then the worker died before deleting the events and the row.
    await env.BUCKET.put(corpusLogKey(t.id, day), "# the log as first written\n");
    expect(await rollUpCorpusDays(env, Date.now())).toBeGreaterThanOrEqual(1);
    expect(await (await env.BUCKET.get(corpusLogKey(t.id, day)))!.text()).toBe("# the log as first written\n");
    expect(await listed(corpusEventPrefix(t.id, day))).toEqual([]);
    expect(await pending(t.id)).toEqual([]);
  });
});

describe("prompt snapshots", () => {
  it("are kept under brain/prefrontal/.debug/ per conversation", async () => {
    const id = await createConversation();
    await send(id, "hello");
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snaps).toHaveLength(1);
    const devTenant = (await env.DB.prepare(`SELECT tenant_id AS t FROM conversations WHERE id = ?`)
      .bind(id)
      .first<{ t: string }>())!.t;
    const keys = await listed(promptSnapshotPrefix(devTenant, id));
    expect(keys).toEqual([
      `tenants/${devTenant}/brain/prefrontal/.debug/${id}/${String(snaps[0].id).padStart(12, "0")}.json`,
    ]);
  });
});

/** Events one read fetches of a day's events not yet in its log (services/corpus.ts READ_EVENTS). */
const READ_EVENTS = 800;

const loggedNumbers = (log: string) => [...log.matchAll(/^- n: (\d+)$/gm)].map((m) => Number(m[1]));

describe("the corpus log of a day not yet rolled up", () => {
  it("shows its first events and then says how many it left out", async () => {
    const { tenantId, key } = await newTenantWithId();
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const n = 1_001;
    for (let i = 0; i < n; i += 1_000) {
      await Promise.all(
        Array.from({ length: Math.min(1_000, n - i) }, (_, j) => {
          const at = new Date(now - 60_000 + i + j);
          return env.BUCKET.put(
            corpusEventKey(tenantId, day, sortableId("evt", at.getTime())),
            `## ${at.toISOString()} fold.applied\n- n: ${i + j}\n`,
          );
        }),
      );
    }
    await env.DB.prepare(`INSERT OR IGNORE INTO corpus_days (tenant_id, day) VALUES (?, ?)`).bind(tenantId, day).run();

    const r = await api("GET", `/v1/corpus/${day}` as "/v1/corpus/:date", undefined, { key });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(r.text.startsWith(`# Corpus log ${day}\n\n## `)).toBe(true);
    // The first events, in order, each once.
    expect(loggedNumbers(r.text)).toEqual(Array.from({ length: READ_EVENTS }, (_, i) => i));
    expect((r.text.match(/^## /gm) ?? []).length).toBe(READ_EVENTS);
    // The last line names the rest and when the roll-up has them.
    const last = r.text.trimEnd().split("\n").at(-1) ?? "";
    expect(last).toMatch(/^_201 later events of this day are not shown: one read fetches at most 800 /);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(last).toContain(`${next}T00:10:00.000Z`);

    // Well inside an invocation's 1,000 subrequests, the same text.
    expect(await readCorpusDay(limitedBucket(900), tenantId, day)).toBe(r.text);
  }, 120_000);

  it("reads a closed day the same when a roll-up tick runs in the middle of the read", async () => {
    // A tick between the read's steps moves events into the log and deletes them: the read takes
    // them from the log instead, none missed and none twice.
    const cases: [string, "list" | "head", number][] = [
      ["2000-01-01", "list", 1],
      ["2000-01-02", "head", 1],
      ["2000-01-03", "head", 2],
    ];
    for (const [day, method, nth] of cases) {
      const { tenantId } = await newTenantWithId();
      const start = Date.parse(`${day}T00:00:00Z`);
      await Promise.all(
        Array.from({ length: 250 }, (_, i) =>
          logCorpusEvent(env, { tenantId, event: "fold.applied", fields: { n: i }, at: new Date(start + i * 1000) }),
        ),
      );
      const whole = await readCorpusDay(env.BUCKET, tenantId, day);
      expect(loggedNumbers(whole ?? "")).toEqual(Array.from({ length: 250 }, (_, i) => i));
      let calls = 0;
      const racing = new Proxy(env.BUCKET, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== "function") return value;
          return async (...args: unknown[]) => {
            if (prop === method && ++calls === nth) await rollUpCorpusDays(env, Date.now());
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      expect(await readCorpusDay(racing, tenantId, day), `${method} #${nth}`).toBe(whole);
      expect(calls).toBeGreaterThanOrEqual(nth);
    }
  }, 120_000);
});
