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

interface CorpusDay {
  tenantId: string;
  day: string;
}

const bodiesOf = (bucket: R2Bucket, objects: readonly { key: string }[]) =>
  Promise.all(objects.map(async (o) => (await bucket.get(o.key))?.text() ?? ""));

/**
 * Events of a day not yet in its log that one read fetches (one R2 get each). With the read's other
 * calls (at most about 80: the log, list pages, a head per batch, counting what is left out) it stays
 * far inside an invocation's subrequests (1,000 on the free plan). A read that leaves events out
 * ends with a line saying how many, and when the roll-up has them.
 */
const READ_EVENTS = 800;
/** Events fetched at once; each batch is then checked against a roll-up tick running meanwhile. */
const READ_BATCH = 100;
/** Roll-up ticks one read follows (see corpusDayChunks) before it stops with the left-out line. */
const READ_RESYNCS = 5;
/** List pages (up to 1,000 keys each) spent counting the events a read leaves out. */
const COUNT_PAGES = 50;
const LIST_PAGE = 1_000;

const utf8 = new TextEncoder();

/** What one read has sent: its bytes, the last event they hold, and the etag of the log they start with. */
interface ReadState {
  bytes: number;
  after?: string;
  etag?: string;
  gets: number;
}

/** `body` without its first `skip` bytes. */
async function* skipBytes(body: ReadableStream<Uint8Array>, skip: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let left = skip;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (left >= r.value.byteLength) left -= r.value.byteLength;
    else {
      yield left ? r.value.subarray(left) : r.value;
      left = 0;
    }
  }
}

/**
 * Takes in the log as it now is: yields what it holds past the text already sent (a roll-up only
 * appends, in key order, so the text sent is a prefix of a log reaching past it) and moves the read
 * past its `through`. Returns whether events may follow it (the log is not whole).
 */
async function* takeLog(log: R2ObjectBody, s: ReadState): AsyncGenerator<Uint8Array, boolean> {
  const through = log.customMetadata?.[THROUGH];
  s.etag = log.etag;
  if (log.size > s.bytes && (!through || !s.after || through > s.after)) {
    yield* skipBytes(log.body, s.bytes);
    s.bytes = log.size;
  } else await log.body.cancel();
  if (through && (!s.after || through > s.after)) s.after = through;
  return through !== undefined;
}

/** The closing line of a read that stopped at its bound: how many events it left out, counted by listing. */
async function* leftOut(bucket: R2Bucket, { prefix, after, day }: { prefix: string; after?: string; day: string }) {
  let count = 0;
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, ...(cursor ? { cursor } : { startAfter: after }), limit: LIST_PAGE });
    count += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
    pages += 1;
  } while (cursor && pages < COUNT_PAGES);
  if (!count) return;
  const from = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000 + ROLLUP_GRACE_MS).toISOString();
  const n = `${cursor ? "more than " : ""}${count.toLocaleString("en-US")}`;
  yield utf8.encode(
    `\n_${n[0].toUpperCase()}${n.slice(1)} later events of this day are not shown: one read fetches at most ` +
      `${READ_EVENTS} events its log does not hold yet. Once the day has closed, the cron roll-up moves them ` +
      `into its log (from ${from}, at most ${ROLLUP_DAY_EVENTS} events of a day per tick); read the day again then._\n`,
  );
}

/**
 * The day's log as it is read: the log so far (whole, or up to its `through`), then the events after
 * it in key (= time) order, fetched in batches; nothing when nothing was logged. The text is the
 * roll-up's: the header and the bodies joined by blank lines, or the log and each body after a blank
 * line. A roll-up tick running meanwhile appends events to the log and then deletes them; after
 * each batch the log's etag is checked, and when it moved the read takes the log's new part instead
 * and lists again after it, so no event is missed or sent twice.
 */
async function* corpusDayChunks(bucket: R2Bucket, { tenantId, day }: CorpusDay): AsyncGenerator<Uint8Array> {
  const logKey = corpusLogKey(tenantId, day);
  const prefix = corpusEventPrefix(tenantId, day);
  const s: ReadState = { bytes: 0, gets: 0 };
  const first = await bucket.get(logKey);
  if (first && !(yield* takeLog(first, s))) return;
  let resyncs = 0;
  for (;;) {
    const room = READ_EVENTS - s.gets;
    if (room <= 0 || resyncs > READ_RESYNCS) return yield* leftOut(bucket, { prefix, after: s.after, day });
    const page = await bucket.list({ prefix, startAfter: s.after, limit: Math.min(LIST_PAGE, room) });
    let moved = false;
    // An empty page is checked too: a tick may have rolled up every event since the log was read.
    for (let i = 0; !moved && (i === 0 || i < page.objects.length); i += READ_BATCH) {
      const batch = page.objects.slice(i, i + READ_BATCH);
      s.gets += batch.length;
      const bodies = await Promise.all(
        batch.map(async (o) => {
          const got = await bucket.get(o.key);
          return got ? new Uint8Array(await got.arrayBuffer()) : null;
        }),
      );
      moved = (await bucket.head(logKey))?.etag !== s.etag;
      if (moved) {
        resyncs += 1;
        const log = await bucket.get(logKey);
        if (!log) s.etag = undefined;
        else if (!(yield* takeLog(log, s))) return;
        continue;
      }
      for (const [j, body] of bodies.entries()) {
        s.after = batch[j].key;
        // Gone without a roll-up (a purge): nothing to show.
        if (!body) continue;
        const lead = utf8.encode(s.bytes ? "\n" : header(day));
        yield lead;
        yield body;
        s.bytes += lead.byteLength + body.byteLength;
      }
    }
    if (!moved && !page.truncated) return;
  }
}

/**
 * The day's log as a stream of markdown: the rolled-up object once it is whole, else what is rolled
 * up so far and the events after it (see corpusDayChunks); `null` when nothing was logged.
 */
export async function streamCorpusDay(bucket: R2Bucket, day: CorpusDay): Promise<ReadableStream<Uint8Array> | null> {
  const chunks = corpusDayChunks(bucket, day);
  const first = await chunks.next();
  if (first.done) return null;
  let pending: Uint8Array | undefined = first.value;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending) {
        controller.enqueue(pending);
        pending = undefined;
        return;
      }
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

/** The day's log as text (streamCorpusDay, read whole); `null` when nothing was logged. */
export async function readCorpusDay(bucket: R2Bucket, tenantId: string, day: string): Promise<string | null> {
  const stream = await streamCorpusDay(bucket, { tenantId, day });
  return stream && new Response(stream).text();
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
