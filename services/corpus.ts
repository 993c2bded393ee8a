// The daily corpus log: lifecycle events of a tenant (compaction.started, compaction.applied,
// fold.applied) as markdown. Writers put one immutable object per event (no append in R2, and
// several writers); once the UTC day has closed, the cron trigger rolls the day into one
// `brain/corpus/YYYY-MM-DD.log.md` object.
import { sortableId } from "../core/ids";
import { corpusEventKey, corpusEventPrefix, corpusLogKey } from "../r2-layout";

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** A day is rolled up only this long after it closed, so no late writer still adds to it. */
const ROLLUP_GRACE_MS = 10 * 60_000;

export async function logCorpusEvent(
  env: Pick<Env, "BUCKET" | "DB">,
  {
    tenantId,
    event,
    fields,
    at = new Date(),
  }: { tenantId: string; event: string; fields: Record<string, unknown>; at?: Date },
): Promise<void> {
  const day = dayOf(at.getTime());
  const lines = [
    `## ${at.toISOString()} ${event}`,
    ...Object.entries(fields).map(([k, v]) => `- ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`),
    "",
  ];
  await env.BUCKET.put(corpusEventKey(tenantId, day, sortableId("evt", at.getTime())), lines.join("\n"), {
    httpMetadata: { contentType: "text/markdown" },
  });
  await env.DB.prepare(`INSERT OR IGNORE INTO corpus_days (tenant_id, day) VALUES (?, ?)`).bind(tenantId, day).run();
}

const header = (day: string) => `# Corpus log ${day}\n\n`;

/** The day's events in key (= time) order, with their keys. */
async function readEvents(
  bucket: R2Bucket,
  { tenantId, day, maxEvents = 5_000 }: { tenantId: string; day: string; maxEvents?: number },
): Promise<{ keys: string[]; bodies: string[] }> {
  const keys: string[] = [];
  const bodies: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: corpusEventPrefix(tenantId, day), cursor, limit: 500 });
    keys.push(...page.objects.map((o) => o.key));
    bodies.push(...(await Promise.all(page.objects.map(async (o) => (await bucket.get(o.key))?.text() ?? ""))));
    cursor = page.truncated && keys.length < maxEvents ? page.cursor : undefined;
  } while (cursor);
  return { keys, bodies };
}

/** The day's log: the rolled-up object once it exists, else the events so far; `null` when nothing was logged. */
export async function readCorpusDay(bucket: R2Bucket, tenantId: string, day: string): Promise<string | null> {
  const log = await bucket.get(corpusLogKey(tenantId, day));
  if (log) return log.text();
  const { bodies } = await readEvents(bucket, { tenantId, day });
  return bodies.length ? header(day) + bodies.join("\n") : null;
}

/**
 * Rolls closed days into their log objects: write the log, then delete the events, then the
 * D1 row. A day whose log already exists (a roll-up interrupted after the write) is only cleaned.
 */
export async function rollUpCorpusDays(env: Pick<Env, "BUCKET" | "DB">, now: number, limit = 25): Promise<number> {
  const { results } = await env.DB.prepare(
    `SELECT tenant_id AS tenantId, day FROM corpus_days WHERE day < ? ORDER BY day LIMIT ?`,
  )
    .bind(dayOf(now - ROLLUP_GRACE_MS), limit)
    .all<{ tenantId: string; day: string }>();
  for (const { tenantId, day } of results) {
    const { keys, bodies } = await readEvents(env.BUCKET, { tenantId, day, maxEvents: Number.MAX_SAFE_INTEGER });
    const logKey = corpusLogKey(tenantId, day);
    if (bodies.length && !(await env.BUCKET.head(logKey))) {
      await env.BUCKET.put(logKey, header(day) + bodies.join("\n"), { httpMetadata: { contentType: "text/markdown" } });
    }
    for (let i = 0; i < keys.length; i += 1000) await env.BUCKET.delete(keys.slice(i, i + 1000));
    await env.DB.prepare(`DELETE FROM corpus_days WHERE tenant_id = ? AND day = ?`).bind(tenantId, day).run();
  }
  return results.length;
}
