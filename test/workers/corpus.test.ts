// The brain/ layout: corpus events roll up into one log per closed UTC day (by the cron
// trigger), prompt snapshots live under brain/prefrontal/.debug/ per conversation.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { corpusEventPrefix, corpusLogKey, promptSnapshotPrefix } from "../../r2-layout";
import chat from "../../workers/chat/index";
import { logCorpusEvent, rollUpCorpusDays } from "../../services/corpus";
import { ADMIN, api, createConversation, send } from "./helpers";

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
