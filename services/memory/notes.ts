// Memory: the tenant's durable notes, fold episodes and the daily memory map. Nothing here is
// injected into a prompt whole: notes and episodes are found through the cortex, and the
// system prompt carries only the map — counts, date ranges and topics.
import { and, count, desc, eq, lt, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { memoryEpisodes, memoryNotes, tenants } from "../../db/schema";
import { sortableId } from "../../core/ids";
import { sliceWhole } from "../../core/text-cut";
import { VISIBLE, withoutHidden } from "../../core/visible-text";
import type { CortexDoc } from "../cortex/search-index";
import { type CortexEnv, cortexFor, routeOf } from "../cortex/routing";
import { type CortexMark, laterMark } from "../cortex/shard";
import { sessionDatabase } from "../d1-session-database";
import { forgetMapsNamingNote } from "./memory-map";

/** What writing memory needs: D1 for the rows, the cortex shard for their index. */
type MemoryEnv = CortexEnv;

/**
 * The most notes one tenant may keep: a model saving in a loop (or a client's) would otherwise grow
 * D1 and the cortex without bound.
 */
export const MAX_NOTES = 10_000;

/** A note refused because the tenant keeps MAX_NOTES already (the API's 409, memory_save's error result). */
export class NoteLimitReached extends Error {
  constructor() {
    super(`the tenant has ${MAX_NOTES} notes, the most it may keep`);
  }
}

export type NoteRow = typeof memoryNotes.$inferSelect;
export type EpisodeRow = typeof memoryEpisodes.$inferSelect;

export interface Note {
  id: string;
  title: string;
  text: string;
  tags: string[];
  sourceConversationId: string | null;
  createdAt: string;
  updatedAt: string;
}

const toNote = (r: NoteRow): Note => ({
  id: r.id,
  title: r.title,
  text: r.body,
  tags: JSON.parse(r.tags) as string[],
  sourceConversationId: r.sourceConversationId,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const noteDoc = (tenantId: string, n: Note): CortexDoc => ({
  tenantId,
  kind: "memory",
  refId: n.id,
  conversationId: null,
  seq: null,
  role: null,
  createdAt: n.createdAt,
  body: [n.title, n.text, n.tags.length ? `tags: ${n.tags.join(", ")}` : ""].filter(Boolean).join("\n"),
});

/**
 * What a note write answers besides its result: the bookmark its last cortex shard write reached
 * (null: it wrote none), so its writer's next search can read at least that far.
 */
export type NoteWritten<T> = T & { written: CortexMark | null };

/** A new note, indexed; NoteLimitReached when the tenant keeps MAX_NOTES already (nothing written). */
export async function createNote(
  env: MemoryEnv,
  tenantId: string,
  input: { title?: string; text: string; tags?: string[]; sourceConversationId?: string | null },
): Promise<NoteWritten<{ note: Note }>> {
  const now = new Date().toISOString();
  const note: Note = {
    id: sortableId("mem"),
    title: input.title?.trim() || firstLine(input.text),
    text: input.text,
    tags: input.tags ?? [],
    sourceConversationId: input.sourceConversationId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  // INSERT … SELECT from the tenant's own row, so the cap is checked in the inserting statement
  // and concurrent saves cannot pass it together.
  const d = drizzle(env.DB);
  const inserted = await d.insert(memoryNotes).select((qb) =>
    qb
      .select({
        id: sql<string>`${note.id}`.as("id"),
        tenantId: tenants.id,
        title: sql<string>`${note.title}`.as("title"),
        body: sql<string>`${note.text}`.as("body"),
        tags: sql<string>`${JSON.stringify(note.tags)}`.as("tags"),
        sourceConversationId: sql<string | null>`${note.sourceConversationId}`.as("source_conversation_id"),
        createdAt: sql<string>`${now}`.as("created_at"),
        updatedAt: sql<string>`${now}`.as("updated_at"),
      })
      .from(tenants)
      .where(
        and(
          eq(tenants.id, tenantId),
          lt(d.select({ n: count() }).from(memoryNotes).where(eq(memoryNotes.tenantId, tenantId)), MAX_NOTES),
        ),
      ),
  );
  if (!inserted.meta.changes) throw new NoteLimitReached();
  let cortex: Awaited<ReturnType<typeof cortexFor>> | undefined;
  try {
    cortex = await cortexFor(env, tenantId);
    await indexAsStored(env, { cortex, tenantId, id: note.id });
  } catch (err) {
    // Not indexed, so not findable by search: the note is not kept half-written (the caller's 500
    // says it was not saved), and a retry writes it whole. An index write that landed before its
    // answer was lost goes too: no search hit for a note that is not there.
    await drizzle(env.DB)
      .delete(memoryNotes)
      .where(and(eq(memoryNotes.tenantId, tenantId), eq(memoryNotes.id, note.id)))
      .catch(() => {});
    await cortex?.deleteDoc(tenantId, "memory", note.id).catch(() => {});
    throw err;
  }
  return { note, written: cortex.written };
}

/** Rounds of "index the row, read it again" before a note's writes are left to the last writer's round. */
const INDEX_ROUNDS = 4;

/**
 * Makes the note's search document what its row holds now: indexes the row, reads it again, and
 * goes round while another write changed it meanwhile (an edit, or a delete, whose own index write
 * this one may have overtaken). Returns the note as indexed, or null when its row is gone (and so
 * is its document).
 */
async function indexAsStored(
  env: MemoryEnv,
  { cortex, tenantId, id }: { cortex: Awaited<ReturnType<typeof cortexFor>>; tenantId: string; id: string },
): Promise<Note | null> {
  let row = await getNote(env.DB, tenantId, id);
  for (let round = 0; row && round < INDEX_ROUNDS; round++) {
    await cortex.index(tenantId, [noteDoc(tenantId, row)]);
    const now = await getNote(env.DB, tenantId, id);
    if (now && JSON.stringify(now) === JSON.stringify(row)) return row;
    row = now;
  }
  if (!row) await cortex.deleteDoc(tenantId, "memory", id);
  return row;
}

export async function getNote(db: D1Database, tenantId: string, id: string): Promise<Note | null> {
  const row = await drizzle(db)
    .select()
    .from(memoryNotes)
    .where(and(eq(memoryNotes.tenantId, tenantId), eq(memoryNotes.id, id)))
    .get();
  return row ? toNote(row) : null;
}

export async function listNotes(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<Note[]> {
  const where = before
    ? and(eq(memoryNotes.tenantId, tenantId), lt(memoryNotes.id, before))
    : eq(memoryNotes.tenantId, tenantId);
  const rows = await drizzle(db).select().from(memoryNotes).where(where).orderBy(desc(memoryNotes.id)).limit(limit);
  return rows.map(toNote);
}

export async function updateNote(
  env: MemoryEnv,
  {
    tenantId,
    id,
    change,
  }: { tenantId: string; id: string; change: { title?: string; text?: string; tags?: string[] } },
): Promise<NoteWritten<{ note: Note | null }>> {
  const db = env.DB;
  // Read at the primary: the request's session may read a replica that has not seen another
  // client's edit, and what is compared with (the memory map's forget) and put back on a failed
  // index write must be the note as it is.
  const current = await getNote(sessionDatabase(db, db.withSession("first-primary")), tenantId, id);
  if (!current) return { note: null, written: null };
  // The shard first, as deleteNote does: a route that cannot be read fails the edit before any
  // field is written, never after (nothing would put the fields back).
  const cortex = await cortexFor(env, tenantId);
  const updatedAt = new Date().toISOString();
  // Only the fields sent are written: two edits at once of different fields both stay.
  const fields = (n: Pick<Note, "title" | "text" | "tags">) => ({
    ...(change.title !== undefined ? { title: n.title } : {}),
    ...(change.text !== undefined ? { body: n.text } : {}),
    ...(change.tags !== undefined ? { tags: JSON.stringify(n.tags) } : {}),
  });
  const updated = await drizzle(db)
    .update(memoryNotes)
    .set({ ...fields({ ...current, ...definedOnly(change) }), updatedAt })
    .where(and(eq(memoryNotes.tenantId, tenantId), eq(memoryNotes.id, id)))
    .returning({ id: memoryNotes.id });
  // Deleted since it was read: gone, as the delete said.
  if (!updated.length) return { note: null, written: null };
  try {
    // A delete that landed meanwhile leaves no document (null: gone, as the delete said); an edit
    // that landed meanwhile is indexed in its turn, so search never keeps an older text. The
    // answer is the note as stored (with any edit that landed meanwhile).
    const stored = await indexAsStored(env, { cortex, tenantId, id });
    // A title or tag taken off must leave the prompts' memory map too, as a delete's does. Only a
    // real change rebuilds it: the map leads every prompt of the tenant (their cached prefix).
    const sameTags = (a: readonly string[], b: readonly string[]) =>
      a.length === b.length && a.every((t, i) => t === b[i]);
    const moved =
      (change.title !== undefined && change.title !== current.title) ||
      (change.tags !== undefined && !sameTags(change.tags, current.tags));
    // Only the maps naming a word it took off are forgotten (forgetMapsNamingNote).
    const now = { ...current, ...definedOnly(change) };
    if (stored && moved)
      await forgetMapsNamingNote(db, tenantId, {
        former: [...current.tags, current.title],
        kept: [...now.tags, now.title],
      }).catch((err) => console.error("memory map not forgotten", err));
    return { note: stored, written: cortex.written };
  } catch (err) {
    // Not indexed: the fields go back to what search holds, unless a later write already replaced them.
    await drizzle(db)
      .update(memoryNotes)
      .set({ ...fields(current), updatedAt: current.updatedAt })
      .where(and(eq(memoryNotes.tenantId, tenantId), eq(memoryNotes.id, id), eq(memoryNotes.updatedAt, updatedAt)))
      .catch(() => {});
    await indexAsStored(env, { cortex, tenantId, id }).catch(() => {});
    throw err;
  }
}

/**
 * The note's search document goes first, then its row, then the document again (an edit may have
 * indexed it meanwhile). A delete cut short after the first step leaves the note whole and
 * findable by id, so the client's retry finishes it; never a row gone with its text still found.
 */
export async function deleteNote(
  env: MemoryEnv,
  tenantId: string,
  id: string,
): Promise<NoteWritten<{ deleted: boolean }>> {
  const cortex = await cortexFor(env, tenantId);
  if (!(await getNote(env.DB, tenantId, id))) {
    // No row: a 404, and any document a write cut short left behind goes with it (in the tenant's
    // shard, if it has one; a failure there leaves the answer a 404).
    if (await routeOf(env, tenantId, { assign: false }))
      await cortex
        .deleteDoc(tenantId, "memory", id)
        .catch((err) => console.error("a 404 note delete could not clear a stray document", err));
    return { deleted: false, written: cortex.written };
  }
  await cortex.deleteDoc(tenantId, "memory", id);
  const res = await drizzle(env.DB)
    .delete(memoryNotes)
    .where(and(eq(memoryNotes.tenantId, tenantId), eq(memoryNotes.id, id)))
    .returning({ title: memoryNotes.title, tags: memoryNotes.tags });
  const [gone] = res;
  if (!gone) return { deleted: false, written: cortex.written };
  await cortex.deleteDoc(tenantId, "memory", id);
  // Its title and tags may be among the map's topics: only the maps naming them are forgotten, the
  // others (and every prompt prefix carrying them) stay (a failure here leaves the delete done).
  await forgetMapsNamingNote(env.DB, tenantId, {
    former: [...(JSON.parse(gone.tags) as string[]), gone.title],
    kept: [],
  }).catch((err) => console.error("memory map not forgotten", err));
  return { deleted: true, written: cortex.written };
}

/**
 * Deletes the notes a conversation's exchange saved that no later request may carry again: a
 * refused turn's (core/replay-rules.ts), a regenerated exchange's. Only notes of that conversation
 * go; `unedited` keeps any note written again since it was saved (someone made it theirs). Each
 * failure is logged and leaves that note: the turn, or the regenerate, goes on. Answers the latest
 * bookmark the deletes reached in the tenant's shard (null: none wrote), for the conversation's read
 * bookmark: its next search must not find a note just deleted.
 */
export async function forgetNotes(
  env: MemoryEnv,
  of: { tenantId: string; conversationId: string },
  which: { ids: readonly string[]; unedited: boolean },
): Promise<CortexMark | null> {
  let reached: CortexMark | null = null;
  for (const id of new Set(which.ids)) {
    try {
      const note = await getNote(env.DB, of.tenantId, id);
      if (!note || note.sourceConversationId !== of.conversationId) continue;
      if (which.unedited && note.updatedAt !== note.createdAt) continue;
      reached = laterMark(reached, (await deleteNote(env, of.tenantId, id)).written);
    } catch (err) {
      console.error("a note of a refused or replaced exchange could not be deleted", err);
    }
  }
  return reached;
}

/**
 * Records a fold's summary as a dated episode of its conversation. Idempotent per fold job. Answers
 * where its cortex shard write left the shard (null: it wrote none), so the writer's next search
 * (the conversation's memory_search) reads at least that far.
 */
export async function recordEpisode(
  env: MemoryEnv,
  e: { tenantId: string; conversationId: string; foldJobId: string; throughSeq: number; summary: string; at: string },
): Promise<CortexMark | null> {
  const db = env.DB;
  const existing = await drizzle(db)
    .select({ id: memoryEpisodes.id })
    .from(memoryEpisodes)
    .where(eq(memoryEpisodes.foldJobId, e.foldJobId))
    .get();
  const id = existing?.id ?? sortableId("epi");
  if (!existing) {
    await drizzle(db)
      .insert(memoryEpisodes)
      .values({
        id,
        tenantId: e.tenantId,
        conversationId: e.conversationId,
        foldJobId: e.foldJobId,
        day: e.at.slice(0, 10),
        throughSeq: e.throughSeq,
        body: e.summary,
        createdAt: e.at,
      })
      .onConflictDoNothing();
  }
  const row = await drizzle(db).select().from(memoryEpisodes).where(eq(memoryEpisodes.foldJobId, e.foldJobId)).get();
  if (!row) return null;
  const cortex = await cortexFor(env, e.tenantId);
  await cortex.index(e.tenantId, [
    {
      tenantId: e.tenantId,
      kind: "episode",
      refId: row.id,
      conversationId: e.conversationId,
      seq: e.throughSeq,
      role: null,
      createdAt: row.createdAt,
      body: row.body,
    },
  ]);
  // Read after the write: a tenant's first write is assigned its shard inside it (shard.ts `assign`).
  return cortex.written;
}

export async function getEpisode(db: D1Database, tenantId: string, id: string): Promise<EpisodeRow | null> {
  return (
    (await drizzle(db)
      .select()
      .from(memoryEpisodes)
      .where(and(eq(memoryEpisodes.tenantId, tenantId), eq(memoryEpisodes.id, id)))
      .get()) ?? null
  );
}

/** Newest first; `before` is the last episode id of the previous page. */
export async function listEpisodes(
  db: D1Database,
  {
    tenantId,
    limit,
    conversationId,
    before,
  }: { tenantId: string; limit: number; conversationId?: string; before?: string },
): Promise<EpisodeRow[]> {
  const where = and(
    eq(memoryEpisodes.tenantId, tenantId),
    conversationId ? eq(memoryEpisodes.conversationId, conversationId) : undefined,
    before ? lt(memoryEpisodes.id, before) : undefined,
  );
  return drizzle(db).select().from(memoryEpisodes).where(where).orderBy(desc(memoryEpisodes.id)).limit(limit);
}

/** The title a note saved without one gets when no line of its text has anything visible. */
export const UNTITLED_NOTE = "note";

/**
 * A note's default title: its first line that still shows something once the hidden-character
 * rule (core/visible-text.ts) is applied, as an explicit title must (visibleName). A bare "\r", a
 * bidi override or a line of zero-width spaces would otherwise reach the memory map and listings.
 */
function firstLine(text: string): string {
  const line = text
    .split(/\r?\n|\u2028|\u2029/)
    .map((l) => withoutHidden(l.replace(/\t/g, " ")).trim())
    .find((l) => VISIBLE.test(l));
  if (!line) return UNTITLED_NOTE;
  return line.length > 80 ? `${sliceWhole(line, 0, 79)}…` : line;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
