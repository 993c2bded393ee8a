// One cortex shard: a D1 database (CORTEX_SHARD_n) holding the search index of the tenants the
// routing table sends to it. Every method takes the caller's tenant and every statement filters by
// it, so a shard shared by many tenants never answers one with another's rows.
//
// Reads run in a Sessions API session: "first-unconstrained" (any replica, near the caller)
// unless the caller passes a bookmark, which makes the session wait for a replica that has seen
// that point. Writes run on the primary and answer with their bookmark, so whoever wrote (the
// conversation's index outbox: messages and fold episodes; pdf_search's page writes) can read its
// own writes on the next search. A read answers its session's bookmark too (search, indexedPages),
// so what one read saw (a PDF's pages the summarizer indexed) a later search sees as well.
//
// With a semantic path on, the shard keeps the tenant's vectors in step (services/semantic/):
// the index outbox asks for them after its write (syncVectors), every delete here forgets the
// deleted documents' vectors at once, and a search catches up on whatever is still missing.
import { deleteRowsInChunks } from "../purge";
import type { SupersededRange } from "../record/conversation-head";
import { readHead } from "../record/r2-record";
import { cortexFusionFor, type SemanticEnv, semanticPathFor } from "../semantic/select";
import { forgetDeletedVectors, syncShardVectors } from "../semantic/shard-vectors";
import { type CortexRow, readRows, writeRows } from "./rows";
import {
  conversationOfMessage,
  countIndexedPages,
  deleteDocs,
  pageRefPattern,
  searchCortexPage,
  upsertDocs,
  type CortexDoc,
  type DocKind,
  type SearchCursor,
  type SearchHit,
  type SearchOptions,
  type ShardDatabase,
} from "./search-index";

export interface ShardParts {
  /** The binding name (CORTEX_SHARD_n). */
  name: string;
  db: D1Database;
  /** A move's target: every write is repeated there (services/cortex/move.ts). */
  mirrors?: readonly D1Database[];
  /** The worker's env, for the semantic path (services/semantic/select.ts). */
  semantic?: SemanticEnv;
  /**
   * The record (R2): a search reads the heads of its message hits' conversations there, to mark a
   * message a regenerate replaced (markSuperseded). Unset: no hit is marked (a bench's shard).
   */
  record?: R2Bucket;
  /**
   * Set when the tenant has no shard yet (so no rows anywhere: `db` answers its reads empty): the
   * first write assigns one (routing.ts) and runs there. A read never writes the routing table.
   */
  assign?: () => Promise<ShardParts>;
}

/** A D1 bookmark: where a session must at least be for a read to see a write. */
export type Bookmark = string | null;

/** Where a write left a shard: a read session on `shard` started at `bookmark` sees it. */
export interface CortexMark {
  shard: string;
  bookmark: string;
}

/** The later of two bookmarks of one database (D1's order as strings: a later one sorts after). */
export const laterBookmark = (a: Bookmark, b: Bookmark): Bookmark => (!a ? b : !b || a >= b ? a : b);

/**
 * Where a reader must start after two writes (either may be none): the later bookmark on one
 * shard; on two, the newer write's (`at`: the tenant moved, and the old shard's bookmark means
 * nothing to the new).
 */
export const laterMark = (held: CortexMark | null, at: CortexMark | null): CortexMark | null =>
  held && at && held.shard === at.shard
    ? { shard: at.shard, bookmark: laterBookmark(held.bookmark, at.bookmark) ?? at.bookmark }
    : (at ?? held);

export class CortexShard {
  private lastWrite: Bookmark = null;

  constructor(private parts: ShardParts) {}

  get name(): string {
    return this.parts.name;
  }

  /**
   * The latest bookmark this handle's writes reached, with its shard (null before any write): what a
   * writer hands on (a note route's `x-cortex-bookmark`, the conversation's read bookmark) so that
   * its next search reads at least that far.
   */
  get written(): CortexMark | null {
    return this.lastWrite ? { shard: this.name, bookmark: this.lastWrite } : null;
  }

  /** A read session: at the bookmark if given, else wherever is nearest. */
  private reader(bookmark?: Bookmark): D1DatabaseSession {
    return this.parts.db.withSession(bookmark || "first-unconstrained");
  }

  /** Runs a write on the primary (and on a move's target); answers the primary's bookmark after it. */
  private async write<T>(fn: (db: ShardDatabase) => Promise<T>): Promise<{ result: T; bookmark: Bookmark }> {
    if (this.parts.assign) this.parts = await this.parts.assign();
    const session = this.parts.db.withSession("first-primary");
    const result = await fn(session);
    for (const mirror of this.parts.mirrors ?? []) await fn(mirror);
    const bookmark = session.getBookmark();
    this.lastWrite = laterBookmark(this.lastWrite, bookmark);
    return { result, bookmark };
  }

  /** Upserts the tenant's docs (others' are dropped); answers the bookmark that sees them. */
  async index(tenantId: string, docs: readonly CortexDoc[]): Promise<Bookmark> {
    const own = docs.filter((d) => d.tenantId === tenantId);
    return (await this.write((db) => upsertDocs(db, own))).bookmark;
  }

  /**
   * The vectors of what was just indexed (the index outbox's step after its shard write): embeds
   * the tenant's documents without a vector and forgets its deleted ones, at the primary and on a
   * move's target (services/semantic/shard-vectors.ts; a no-op where the cortex is lexical only).
   * `left`: documents remain for another run. A tenant with no shard has nothing to embed.
   */
  async syncVectors(tenantId: string): Promise<{ left: boolean; bookmark: Bookmark }> {
    if (this.parts.assign || !semanticPathFor(this.semanticEnv, this.parts.db)) return { left: false, bookmark: null };
    const { result, bookmark } = await this.write((db) => syncShardVectors(this.semanticEnv, db, tenantId));
    return { left: result, bookmark };
  }

  private get semanticEnv(): SemanticEnv {
    return this.parts.semantic ?? {};
  }

  async search(
    tenantId: string,
    q: string,
    opts: SearchOptions & { cursor?: SearchCursor; bookmark?: Bookmark },
  ): Promise<{ hits: SearchHit[]; next: SearchCursor | null; bookmark: Bookmark }> {
    const { bookmark, ...rest } = opts;
    const session = this.reader(bookmark);
    // The semantic path, when this deployment has one (services/semantic/select.ts), fuses in here.
    const page = await searchCortexPage(session, tenantId, {
      ...rest,
      q,
      fusion: cortexFusionFor(this.semanticEnv, session),
    });
    const record = this.parts.record;
    const hits = record ? await markSuperseded(page.hits, { record, tenantId }) : page.hits;
    return { ...page, hits, bookmark: session.getBookmark() ?? bookmark ?? null };
  }

  conversationOfMessage(tenantId: string, messageId: string, bookmark?: Bookmark): Promise<string | null> {
    return conversationOfMessage(this.reader(bookmark), tenantId, messageId);
  }

  countIndexedPages(tenantId: string, attachmentId: string, bookmark?: Bookmark): Promise<number> {
    return countIndexedPages(this.reader(bookmark), tenantId, attachmentId);
  }

  /**
   * countIndexedPages with where its session read (`seen`, as a search answers its bookmark): a
   * search started there sees every page counted, wherever the pages were written (the summarizer's
   * extraction jobs write them on their own handle). Null `seen` for a tenant with no shard yet.
   */
  async indexedPages(
    tenantId: string,
    attachmentId: string,
    bookmark?: Bookmark,
  ): Promise<{ indexed: number; seen: CortexMark | null }> {
    const session = this.reader(bookmark);
    const indexed = await countIndexedPages(session, tenantId, attachmentId);
    // A stand-in's session (no shard yet) read a database that holds nothing of the tenant.
    const at = this.parts.assign ? null : (session.getBookmark() ?? bookmark ?? null);
    return { indexed, seen: at ? { shard: this.name, bookmark: at } : null };
  }

  async deleteDoc(tenantId: string, kind: DocKind, refId: string): Promise<Bookmark> {
    return (
      await this.write(async (db) => {
        await deleteDocs(db, tenantId, { kind, refId });
        await forgetDeletedVectors(this.semanticEnv, db, tenantId);
      })
    ).bookmark;
  }

  /** An attachment's extracted pages; answers the bookmark that sees them gone (a DELETE's `x-cortex-bookmark`). */
  async purgeAttachment(tenantId: string, attachmentId: string): Promise<Bookmark> {
    return (
      await this.write(async (db) => {
        await deleteRowsInChunks(db, {
          table: "cortex_docs",
          where: "tenant_id = ? AND kind = 'page' AND ref_id LIKE ?",
          params: [tenantId, pageRefPattern(attachmentId)],
        });
        await forgetDeletedVectors(this.semanticEnv, db, tenantId);
      })
    ).bookmark;
  }

  /**
   * Every row of a conversation: its messages, episodes and its attachments' pages; answers the
   * bookmark that sees them gone.
   */
  async purgeConversation(tenantId: string, conversationId: string): Promise<Bookmark> {
    return (
      await this.write(async (db) => {
        await deleteRowsInChunks(db, {
          table: "cortex_docs",
          where: "tenant_id = ? AND conversation_id = ?",
          params: [tenantId, conversationId],
        });
        await forgetDeletedVectors(this.semanticEnv, db, tenantId);
      })
    ).bookmark;
  }

  /**
   * Where the shard's primary is now, with its shard: at or after every write to it that completed
   * before the call, made through any handle (a conversation's purge, run by its object, answers its
   * DELETE this way). Null for a tenant with no shard (no rows anywhere); a read, never a write.
   */
  async primaryMark(): Promise<CortexMark | null> {
    if (this.parts.assign) return null;
    const session = this.parts.db.withSession("first-primary");
    await session.prepare("SELECT 1").first();
    const bookmark = session.getBookmark();
    return bookmark ? { shard: this.name, bookmark } : null;
  }

  /** Rows copied in from another store (a move), doc ids kept; answers how many. */
  async importRows(tenantId: string, rows: readonly CortexRow[]): Promise<number> {
    return (await this.write((db) => writeRows(db, tenantId, rows))).result;
  }

  /** How many rows (chunks) of the tenant this shard holds: the moves' and the tests' check. */
  async countDocs(tenantId: string): Promise<number> {
    return (
      (await this.parts.db
        .prepare(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`)
        .bind(tenantId)
        .first<number>("n")) ?? 0
    );
  }
}

/**
 * `hits` with each message a regenerate replaced marked `superseded: true` and `supersededBy` (the
 * user message that replaced it), as the transcript marks it. The marks are the conversation's head
 * (R2, the record: a regenerate writes its ranges there before the new reply's first model request),
 * read once per conversation among the message hits; not the index's rows, which were written
 * before the regenerate, so a row indexed at any time is marked and the shard's schema is unchanged.
 * A conversation whose head is gone (being deleted), or cannot be read, marks nothing.
 */
export async function markSuperseded(
  hits: readonly SearchHit[],
  where: { record: R2Bucket; tenantId: string },
): Promise<SearchHit[]> {
  const ids = new Set<string>();
  for (const h of hits) if (h.kind === "message" && h.conversationId && h.seq !== null) ids.add(h.conversationId);
  if (!ids.size) return [...hits];
  const ranges = new Map<string, readonly SupersededRange[]>();
  await Promise.all(
    [...ids].map(async (id) => {
      // A mark is a note on a hit, never worth the search: a head that cannot be read (after
      // readHead's retries) leaves its conversation's hits unmarked, the rest of the page as found.
      const head = await readHead(where.record, where.tenantId, id).catch((err: unknown) => {
        console.warn(`search: conversation ${id}'s head could not be read; its hits go unmarked`, err);
        return null;
      });
      if (head?.superseded?.length) ranges.set(id, head.superseded);
    }),
  );
  return hits.map((h) => {
    const seq = h.seq;
    const range =
      h.kind === "message" && h.conversationId && seq !== null
        ? ranges.get(h.conversationId)?.find((r) => seq >= r.fromSeq && seq <= r.toSeq)
        : undefined;
    return range ? { ...h, superseded: true as const, supersededBy: range.by } : h;
  });
}

/** A page of a tenant's rows in one shard database, read at the primary (a move's source). */
export const rowsOf = (db: D1Database, tenantId: string, page: { after: number; limit: number }) =>
  readRows(db.withSession("first-primary"), tenantId, page);
