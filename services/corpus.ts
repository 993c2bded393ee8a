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
/**
 * Events one tick rolls up of one day, and of all days: a day of any size is rolled over several
 * ticks, each far inside an invocation's subrequests (1,000 on the free plan, shared with the
 * tick's other sweeps: one R2 get per event) and memory.
 */
const ROLLUP_DAY_EVENTS = 100;
const ROLLUP_TICK_EVENTS = 400;
/**
 * The log of a day still being rolled up carries this custom metadata: the key of the last event
 * it holds. Events up to it are in the log (their deletes may not have run yet); later ones are not.
 * A log without it is whole.
 */
const THROUGH = "through";
const LOG_META = { httpMetadata: { contentType: "text/markdown" } };

/** Event bodies appended to a log text: the log is the header then the bodies joined by blank lines. */
const appended = (bodies: readonly string[]) => bodies.map((b) => `\n${b}`).join("");

/** The day's events in key (= time) order (those after `after` only), with their keys. */
async function readEvents(
  bucket: R2Bucket,
  { tenantId, day, after }: { tenantId: string; day: string; after?: string },
): Promise<{ keys: string[]; bodies: string[] }> {
  const maxEvents = 5_000;
  const keys: string[] = [];
  const bodies: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({
      prefix: corpusEventPrefix(tenantId, day),
      ...(cursor ? { cursor } : { startAfter: after }),
      limit: 500,
    });
    keys.push(...page.objects.map((o) => o.key));
    bodies.push(...(await bodiesOf(bucket, page.objects)));
    cursor = page.truncated && keys.length < maxEvents ? page.cursor : undefined;
  } while (cursor);
  return { keys, bodies };
}

const bodiesOf = (bucket: R2Bucket, objects: readonly { key: string }[]) =>
  Promise.all(objects.map(async (o) => (await bucket.get(o.key))?.text() ?? ""));

/**
 * The day's log: the rolled-up object once it is whole, else what is rolled up so far and the events
 * after it; `null` when nothing was logged.
 */
export async function readCorpusDay(bucket: R2Bucket, tenantId: string, day: string): Promise<string | null> {
  const logKey = corpusLogKey(tenantId, day);
  for (let attempt = 1; ; attempt++) {
    const log = await bucket.get(logKey);
    const through = log?.customMetadata?.[THROUGH];
    if (log && !through) return log.text();
    const text = log ? await log.text() : null;
    const { bodies } = await readEvents(bucket, { tenantId, day, after: through });
    // A roll-up tick between the two reads may have moved events from the second into the first:
    // read both again rather than miss them.
    if (attempt < 3 && (await bucket.head(logKey))?.etag !== log?.etag) continue;
    if (text !== null) return text + appended(bodies);
    return bodies.length ? header(day) + bodies.join("\n") : null;
  }
}

interface CorpusDay {
  tenantId: string;
  day: string;
}

/**
 * One tick's work on one day, at most `max` events: append the events not yet in the log to it
 * (a conditional write, so a concurrent tick's work is never overwritten), then delete them; once
 * none is left, the log is written whole and the D1 row deleted. A day whose log is whole already
 * (a roll-up interrupted after its last write) is only cleaned. Returns the events read and
 * whether the day is done.
 */
async function rollUpStep(
  env: Pick<Env, "BUCKET" | "DB">,
  { tenantId, day }: CorpusDay,
  max: number,
): Promise<{ read: number; done: boolean }> {
  const logKey = corpusLogKey(tenantId, day);
  const log = await env.BUCKET.get(logKey);
  const through = log?.customMetadata?.[THROUGH];
  const page = await env.BUCKET.list({ prefix: corpusEventPrefix(tenantId, day), limit: max });
  const keys = page.objects.map((o) => o.key);
  const fresh = log && !through ? [] : page.objects.filter((o) => !through || o.key > through);
  const last = page.truncated ? (fresh.at(-1)?.key ?? through) : undefined;
  // Nothing to add and the log's state unchanged (or no log and nothing ever logged): no write.
  if (fresh.length || (log && through !== last)) {
    const bodies = await bodiesOf(env.BUCKET, fresh);
    const text = log ? (await log.text()) + appended(bodies) : header(day) + bodies.join("\n");
    const written = await env.BUCKET.put(logKey, text, {
      ...LOG_META,
      customMetadata: last ? { [THROUGH]: last } : {},
      onlyIf: log ? { etagMatches: log.etag } : { etagDoesNotMatch: "*" },
    });
    // Another tick wrote the log since it was read: that tick does this work.
    if (!written) return { read: fresh.length, done: false };
  }
  if (keys.length) await env.BUCKET.delete(keys);
  if (page.truncated) return { read: fresh.length, done: false };
  await env.DB.prepare(`DELETE FROM corpus_days WHERE tenant_id = ? AND day = ?`).bind(tenantId, day).run();
  return { read: fresh.length, done: true };
}

/**
 * Rolls closed days, oldest first, into their log objects, a bounded part of each per tick (see
 * rollUpStep). A day that fails is logged and left for the next tick: the days after it go on.
 * Returns how many days were finished.
 */
export async function rollUpCorpusDays(env: Pick<Env, "BUCKET" | "DB">, now: number, limit = 25): Promise<number> {
  const { results } = await env.DB.prepare(
    `SELECT tenant_id AS tenantId, day FROM corpus_days WHERE day < ? ORDER BY day LIMIT ?`,
  )
    .bind(dayOf(now - ROLLUP_GRACE_MS), limit)
    .all<CorpusDay>();
  let budget = ROLLUP_TICK_EVENTS;
  let finished = 0;
  for (const row of results) {
    if (budget <= 0) break;
    try {
      const { read, done } = await rollUpStep(env, row, Math.min(budget, ROLLUP_DAY_EVENTS));
      budget -= read;
      if (done) finished++;
    } catch (err) {
      // Not charged to the budget: days that fail on every tick must not use up every tick's.
      console.error(`corpus roll-up of ${row.tenantId} ${row.day} failed`, err);
    }
  }
  return finished;
}
