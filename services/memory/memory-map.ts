// The <memory_map>: what the tenant's memory holds (counts, date ranges, topics), never the
// content. Computed at most once per tenant per UTC day and stored in D1; the first writer wins,
// so every conversation of the tenant carries the same bytes all day and the prompt prefix stays
// cacheable.
import { count, desc, eq, max, min } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversations, memoryEpisodes, memoryNotes } from "../../db/schema";

const STOPWORDS = new Set(
  "about after again also among been before being between both could does doing down during each from further have having here into itself just more most once only other over same should some such than that their them then there these they this those through under until very were what when where which while whom will with would your yours conversation".split(
    " ",
  ),
);
const TOPICS = 10;

export const utcDay = (now = Date.now()): string => new Date(now).toISOString().slice(0, 10);

/**
 * The row that names the generation of the tenant's stored maps: a random token, under a day no
 * map has. forgetMemoryMap removes it with the maps, so a token read before a forget is gone after it.
 */
const GENERATION = "generation";
/** Computes after a forget landed mid-compute before this request gives up storing its map. */
const STORE_ATTEMPTS = 3;

export async function memoryMapFor(db: D1Database, tenantId: string, day: string): Promise<string> {
  const stored = await storedMap(db, tenantId, day);
  if (stored) return stored;
  let body = "";
  for (let attempt = 0; attempt < STORE_ATTEMPTS; attempt++) {
    // The generation is taken before the titles are read: a note or conversation deleted after
    // this point forgets it, and the map computed from the titles it read is then not stored (it
    // would carry a deleted title into every prompt of the tenant for the rest of the day).
    const generation = await generationOf(db, tenantId);
    body = await computeMemoryMap(db, tenantId, day);
    await db
      .prepare(
        `INSERT INTO memory_maps (tenant_id, day, body, created_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_maps WHERE tenant_id = ? AND day = ? AND body = ?) ON CONFLICT(tenant_id, day) DO NOTHING`,
      )
      .bind(tenantId, day, body, new Date().toISOString(), tenantId, GENERATION, generation)
      .run();
    // Read back: if another conversation computed it first, use its bytes. None stored: a forget
    // landed while this one was computed, so it is computed again from what is left.
    const winner = await storedMap(db, tenantId, day);
    if (winner) return winner;
  }
  // Forgotten during every attempt: the last map (read after the previous forget) goes unstored.
  return body;
}

async function storedMap(db: D1Database, tenantId: string, day: string): Promise<string | null> {
  const row = await db
    .prepare(`SELECT body FROM memory_maps WHERE tenant_id = ? AND day = ?`)
    .bind(tenantId, day)
    .first<{ body: string }>();
  return row?.body ?? null;
}

/** The tenant's map generation, started (a new token) when no map has been stored since the last forget. */
async function generationOf(db: D1Database, tenantId: string): Promise<string> {
  const [, read] = await db.batch<{ body: string }>([
    db
      .prepare(
        `INSERT INTO memory_maps (tenant_id, day, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(tenant_id, day) DO NOTHING`,
      )
      .bind(tenantId, GENERATION, crypto.randomUUID(), new Date().toISOString()),
    db.prepare(`SELECT body FROM memory_maps WHERE tenant_id = ? AND day = ?`).bind(tenantId, GENERATION),
  ]);
  const token = read.results[0]?.body;
  if (!token) throw new Error("memory map: no generation");
  return token;
}

/**
 * Forgets the tenant's stored maps (every day's) and their generation: after a conversation is
 * deleted whose title is not known, its title must not ride the next prompts (a note's delete or
 * edit forgets only the maps naming it: forgetMapsNamingNote). The next request
 * computes the map again; the conversations holding today's check it within MEMORY_MAP_RECHECK_MS.
 * A map computed from titles read before the forget is not stored after it (memoryMapFor).
 */
export const forgetMemoryMap = (db: D1Database, tenantId: string): D1PreparedStatement =>
  db.prepare(`DELETE FROM memory_maps WHERE tenant_id = ?`).bind(tenantId);

/**
 * After a conversation's rename: forgets the generation (a map computed from titles read before the
 * rename is then not stored), then only the stored maps whose topics hold a word of a title it had
 * (those words must ride no further prompts). A map without them stays, and with it the prompt
 * prefix, and its cache, of every conversation of the tenant. In that order: a map stored before
 * the generation went is read here; one computed after reads the new title.
 */
export async function forgetMapsNaming(db: D1Database, tenantId: string, titles: readonly string[]): Promise<void> {
  await forgetMapGeneration(db, tenantId).run();
  await forgetStoredMapsNaming(db, tenantId, titles);
}

/**
 * Forgets the tenant's map generation only: a map computed from titles read before this is not
 * stored after it (memoryMapFor). A conversation's purge runs it in the batch that deletes the
 * listing row, then forgetStoredMapsNaming with the title that row had.
 */
export const forgetMapGeneration = (db: D1Database, tenantId: string): D1PreparedStatement =>
  db.prepare(`DELETE FROM memory_maps WHERE tenant_id = ? AND day = ?`).bind(tenantId, GENERATION);

/**
 * Once the generation is gone (forgetMapGeneration): the stored maps whose topics hold a word of one
 * of `titles`. A title without such words (the default "New conversation") names no map.
 */
export async function forgetStoredMapsNaming(
  db: D1Database,
  tenantId: string,
  titles: readonly string[],
): Promise<void> {
  await forgetStoredMapsWith(db, tenantId, new Set(titles.flatMap((title) => words(title.toLowerCase()))));
}

/**
 * After a note's delete (`kept` empty), or an edit that changed its title or tags (`kept`: the
 * title and tags it has now): forgets the generation, then only the stored maps whose topics hold
 * a topic the note's former title and tags gave (topicsOf's rule) that its present ones do not. A
 * map that never named them (one stored before the note was saved, or whose 10 topics are other
 * words) stays, and with it every conversation's prompt prefix and its cache; its counts of notes
 * may then be a note off until the next UTC day. In that order, after the row is written, as
 * forgetMapsNaming: a map computed from the note as it was is either read here or not stored.
 */
export async function forgetMapsNamingNote(
  db: D1Database,
  tenantId: string,
  terms: { former: readonly string[]; kept: readonly string[] },
): Promise<void> {
  await forgetMapGeneration(db, tenantId).run();
  const kept = new Set(terms.kept.flatMap(noteTermTopics));
  await forgetStoredMapsWith(db, tenantId, new Set(terms.former.flatMap(noteTermTopics).filter((t) => !kept.has(t))));
}

/** Deletes the tenant's stored maps whose topics hold one of `gone`. */
async function forgetStoredMapsWith(db: D1Database, tenantId: string, gone: ReadonlySet<string>): Promise<void> {
  if (!gone.size) return;
  const stored = await db
    .prepare(`SELECT day, body FROM memory_maps WHERE tenant_id = ? AND day != ?`)
    .bind(tenantId, GENERATION)
    .all<{ day: string; body: string }>();
  const naming = stored.results.filter((m) => topicsIn(m.body).some((topic) => gone.has(topic)));
  if (!naming.length) return;
  await db.batch(
    naming.map((m) => db.prepare(`DELETE FROM memory_maps WHERE tenant_id = ? AND day = ?`).bind(tenantId, m.day)),
  );
}

/** The topics a stored map names (renderMemoryMap's topics line). */
const topicsIn = (body: string): string[] => /^- topics: (.*)$/m.exec(body)?.[1].split(", ") ?? [];

/** How long a conversation holds the day's map before reading the stored one again. */
export const MEMORY_MAP_RECHECK_MS = 5 * 60_000;

interface Span {
  n: number;
  first: string | null;
  last: string | null;
}

export async function computeMemoryMap(db: D1Database, tenantId: string, day: string): Promise<string> {
  const d = drizzle(db);
  const [[notes], [episodes], [convs], noteWords, convWords] = await d.batch([
    d
      .select({ n: count(), first: min(memoryNotes.createdAt), last: max(memoryNotes.updatedAt) })
      .from(memoryNotes)
      .where(eq(memoryNotes.tenantId, tenantId)),
    d
      .select({ n: count(), first: min(memoryEpisodes.day), last: max(memoryEpisodes.day) })
      .from(memoryEpisodes)
      .where(eq(memoryEpisodes.tenantId, tenantId)),
    d
      .select({ n: count(), first: min(conversations.createdAt), last: max(conversations.updatedAt) })
      .from(conversations)
      .where(eq(conversations.tenantId, tenantId)),
    d
      .select({ title: memoryNotes.title, tags: memoryNotes.tags })
      .from(memoryNotes)
      .where(eq(memoryNotes.tenantId, tenantId))
      .orderBy(desc(memoryNotes.updatedAt))
      .limit(200),
    d
      .select({ title: conversations.title })
      .from(conversations)
      .where(eq(conversations.tenantId, tenantId))
      .orderBy(desc(conversations.updatedAt))
      .limit(200),
  ]);
  const topics = topicsOf(
    noteWords.flatMap((r) => [...(JSON.parse(r.tags) as string[]), r.title]),
    convWords.map((r) => r.title),
  );
  return renderMemoryMap(day, { notes, episodes, conversations: convs, topics });
}

export function renderMemoryMap(
  day: string,
  m: { notes: Span; episodes: Span; conversations: Span; topics: string[] },
): string {
  const range = (s: Span) => (s.n ? `${s.n}, ${s.first!.slice(0, 10)} to ${s.last!.slice(0, 10)}` : "none");
  return [
    `<memory_map day="${day}">`,
    "What your memory holds; none of it is loaded here. memory_search finds items by words or identifiers, memory_get reads one in full, memory_save keeps a new note.",
    `- notes: ${range(m.notes)}`,
    `- episodes (summaries of folded conversation history): ${range(m.episodes)}`,
    `- conversations: ${range(m.conversations)}`,
    `- topics: ${m.topics.length ? m.topics.join(", ") : "none yet"}`,
    "</memory_map>",
  ].join("\n");
}

/**
 * A tag or title taken whole as a topic: a word with the punctuation names use ("node.js", "c++",
 * "ci/cd", "budget-2025"). Topics ride every prompt of the tenant inside <memory_map>, and tags and
 * titles are any text (the model's memory_save writes them too): anything else is split into
 * words, which cannot close the block or break its line.
 */
const TOPIC = /^[\p{L}\p{N}][\p{L}\p{N}._+#/-]{2,39}$/u;
/** Longer words are left out rather than cut (a cut word is not a topic). */
const TOPIC_MAX = 40;

/** Tags count double; then title words. Ties keep first appearance, so the order is deterministic. */
export function topicsOf(noteTerms: string[], conversationTitles: string[]): string[] {
  const counts = new Map<string, number>();
  const add = (term: string, weight: number) => counts.set(term, (counts.get(term) ?? 0) + weight);
  for (const t of noteTerms) {
    const weight = TOPIC.test(t.trim().toLowerCase()) ? 2 : 1;
    for (const topic of noteTermTopics(t)) add(topic, weight);
  }
  for (const title of conversationTitles) for (const w of words(title.toLowerCase())) add(w, 1);
  return [...counts.entries()]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOPICS)
    .map(([t]) => t);
}

/** The topics one of a note's tags or its title gives: itself whole when it is a TOPIC, else its words. */
function noteTermTopics(t: string): string[] {
  const term = t.trim().toLowerCase();
  return TOPIC.test(term) ? [term] : words(term);
}

function words(text: string): string[] {
  return (text.match(/[\p{L}][\p{L}\p{N}-]{3,}/gu) ?? []).filter(
    (w) => w.length <= TOPIC_MAX && !STOPWORDS.has(w) && w !== "new",
  );
}
