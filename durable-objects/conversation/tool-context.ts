// The tools' view of the conversation during one turn: every call closes over the caller's
// tenant (so no tool reaches another tenant's data) and reads the object's bindings at use. Built
// slice by slice (transcript, cortex, attachments, memory, tools), the slices tools name.
import { EXTRACT_CHUNK_PAGES, type ExtractJob, MAX_INDEXED_PDF_PAGES } from "../../core/jobs";
import type {
  AttachmentAccess,
  CortexAccess,
  MemoryAccess,
  ReadMessages,
  ReadQuery,
  ToolContext,
  TranscriptAccess,
} from "../../agent/tools/registry";
import { textViewFor } from "../../services/attachments/text-view";
import { putPdfPages } from "../../services/attachments/page-index";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { getAttachmentRow, indexProgressAt, markIndexing, toAttachment } from "../../services/attachments/store";
import { cortexFor } from "../../services/cortex/routing";
import type { CortexMark } from "../../services/cortex/shard";
import { listConversationRows } from "../../services/conversation-list";
import { createNote, deleteNote, getEpisode, getNote, updateNote } from "../../services/memory/notes";
import type { ConversationRef } from "../../services/record/conversation-head";
import { sessionDatabase } from "../../services/d1-session-database";
import { indexSettled } from "./index-outbox";
import { moveCortexBookmark, type ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";

/**
 * The most extraction jobs one start of a PDF's indexing queues: its first MAX_INDEXED_PDF_PAGES
 * pages. The page count comes from the file, and however it came to be wrong or huge, one search
 * must not flood the queue.
 */
export const MAX_EXTRACT_JOBS = MAX_INDEXED_PDF_PAGES / EXTRACT_CHUNK_PAGES;

/**
 * How long a search of the tenant's messages waits at most for the object's indexing run under way
 * (index-outbox.ts settled), so the turn before's messages are found: a run is a few D1 round trips
 * (plus an embedding call on the semantic path), and a stuck or failing one (the alarm retries it)
 * must never hang the turn: past this the search runs on what is indexed.
 */
export const INDEX_SETTLE_MS = 5_000;

/** `run` over, or `ms` gone by, whichever comes first. */
async function within(run: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([run, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** The extraction jobs that index pages 1..pageCount, a chunk each, at most MAX_EXTRACT_JOBS. */
export function extractJobs(of: { tenantId: string; attachmentId: string; pageCount: number }): ExtractJob[] {
  const { tenantId, attachmentId } = of;
  const last = Math.min(of.pageCount, MAX_EXTRACT_JOBS * EXTRACT_CHUNK_PAGES);
  const jobs: ExtractJob[] = [];
  for (let from = 1; from <= last; from += EXTRACT_CHUNK_PAGES)
    jobs.push({
      kind: "extract",
      tenantId,
      attachmentId,
      fromPage: from,
      toPage: Math.min(last, from + EXTRACT_CHUNK_PAGES - 1),
    });
  return jobs;
}

/**
 * The D1 writes a turn makes for its caller before its reply, on the object's own binding: its notes
 * (memory_save, memory_update, memory_forget, a refused exchange's notes forgotten). They run in one
 * session at the primary, opened at the first of them; where they reached goes on the turn's
 * `turn_end` (`d1Bookmark`), so the answer's x-d1-bookmark covers them (workers/chat/d1-session.ts
 * wroteElsewhere). A session keeps the latest bookmark of its statements, concurrent ones included.
 */
export class TurnWrites {
  private session: D1DatabaseSession | null = null;

  constructor(private readonly scope: ObjectScope) {}

  /** The object's bindings with DB in the turn's session (the binding read at use, as tool calls read it). */
  get env(): Env {
    const db = this.scope.env.DB;
    this.session ??= db.withSession("first-primary");
    return { ...this.scope.env, DB: sessionDatabase(db, this.session) };
  }

  /** Where the turn's writes reached, as its `turn_end` tells it (nothing when it wrote none). */
  reached(): { d1Bookmark?: string } {
    const bookmark = this.session?.getBookmark();
    return bookmark ? { d1Bookmark: bookmark } : {};
  }

  /** The object's scope as the note helpers take it (regenerate.ts), their D1 writes in the turn's session. */
  noteScope(): Pick<ObjectScope, "env" | "store" | "cortexBookmark"> {
    const { scope } = this;
    const env = () => this.env;
    return {
      get env() {
        return env();
      },
      store: scope.store,
      get cortexBookmark() {
        return scope.cortexBookmark;
      },
      set cortexBookmark(mark) {
        scope.cortexBookmark = mark;
      },
    };
  }
}

export type ReadOwn = (ref: ConversationRef, query: ReadQuery) => Promise<ReadMessages | null>;

export interface ToolContextParts {
  scope: ObjectScope;
  record: ConversationRecord;
  ref: ConversationRef;
  /** Tools the conversation's project files need, available without activation. */
  projectTools: readonly string[];
  /** This conversation's messages, through the same tenant check as the RPC. */
  readOwn: ReadOwn;
  progress(message: string): void;
  /** The turn's D1 writes for its caller: the note tools write through it. */
  writes: TurnWrites;
}

/**
 * The one object satisfying every slice of ToolContext (agent/tools/registry.ts) for this turn.
 * `activeTools` stays a getter on the returned object: a later call in the same turn sees a tool
 * activated by an earlier one.
 */
export function toolContextFor(parts: ToolContextParts): ToolContext {
  const { scope, record, ref, projectTools, readOwn, progress, writes } = parts;
  // `scope.env` is read at each use (a binding swapped on the live object is seen at once).
  const { tenantId, conversationId } = ref;
  const cortex = () => cortexFor(scope.env, tenantId);
  /**
   * The shard, once the object's indexing under way is over (bounded: INDEX_SETTLE_MS), for a read
   * of what it indexes (messages, episodes): the turn before's are written after its answer.
   */
  const indexedCortex = async () => {
    await within(indexSettled(scope), INDEX_SETTLE_MS);
    return cortex();
  };
  /** The object's last index write's bookmark, where it is of this shard (not one the tenant moved from). */
  const bookmarkIn = (shard: { name: string }) =>
    scope.cortexBookmark?.shard === shard.name ? scope.cortexBookmark.bookmark : null;
  /**
   * A note tool's shard write moves the object's read bookmark on, so a memory_search later in the
   * turn sees the note saved (or not the one forgotten): object-scope.ts moveCortexBookmark.
   */
  const reached = <T extends { written: CortexMark | null }>(w: T): T => {
    moveCortexBookmark(scope, w.written);
    return w;
  };

  const transcript: TranscriptAccess = {
    listConversations: async (limit, before) =>
      (await listConversationRows(scope.env.DB, { tenantId, limit, before })).map(({ tenantId: _t, ...row }) => row),
    readConversation: (id, query) =>
      id === conversationId
        ? readOwn(ref, query)
        : scope.env.CONVERSATION.get(scope.env.CONVERSATION.idFromName(id)).readMessages(
            { tenantId, conversationId: id },
            query,
          ),
  };

  const search: CortexAccess = {
    // A read session near the caller, from the object's last index write on (read-your-writes).
    // What the model finds goes back to it: never a refused turn, which no request carries again.
    // A search of pages only (pdf_search) reads nothing the object indexes, and does not wait for it.
    search: async (query, limit, opts) => {
      const pagesOnly = !!opts?.kinds?.length && opts.kinds.every((k) => k === "page");
      const shard = await (pagesOnly ? cortex() : indexedCortex());
      const own = { limit, ...opts, withoutRefused: true, bookmark: bookmarkIn(shard) };
      return (await shard.search(tenantId, query, own)).hits;
    },
  };

  const attachments: AttachmentAccess = {
    pageIndex: {
      status: async (attachmentId) => {
        const row = await getAttachmentRow(scope.env.DB, tenantId, attachmentId);
        // The summarizer writes the pages on its own handle: the count's session is where they were
        // seen, and the object's bookmark moves there, so pdf_search's search finds every page counted.
        const { indexed, seen } = await (await cortex()).indexedPages(tenantId, attachmentId);
        moveCortexBookmark(scope, seen);
        return {
          status: row?.indexStatus ?? "none",
          // The run's last sign of life (its start or its latest pages): what a stall is judged on.
          startedAt: row ? indexProgressAt(row) : null,
          indexed,
        };
      },
      start: async (attachmentId, pageCount) => {
        await markIndexing(scope.env.DB, tenantId, attachmentId);
        const jobs = extractJobs({ tenantId, attachmentId, pageCount }).map((body) => ({ body }));
        for (let i = 0; i < jobs.length; i += 100) await scope.env.JOB_QUEUE.sendBatch(jobs.slice(i, i + 100));
      },
      put: async (attachmentId, pages) => {
        const row = await getAttachmentRow(scope.env.DB, tenantId, attachmentId);
        const put = row ? await putPdfPages(scope.env, row, pages) : null;
        // Written at the primary: the search that follows starts from there (a replica may lag).
        moveCortexBookmark(scope, put?.written ?? null);
        return put?.indexed ?? null;
      },
    },
    openAttachment: async (id) => {
      const row = await getAttachmentRow(scope.env.DB, tenantId, id);
      const reader = row?.status === "ready" ? await r2RangeReader(scope.env.BUCKET, row.r2Key) : null;
      if (!row || !reader) return null;
      return {
        attachment: toAttachment(row),
        reader,
        text: () =>
          textViewFor(scope.env.BUCKET, {
            tenantId: row.tenantId,
            attachmentId: row.id,
            blobKey: row.r2Key,
            exists: async () => (await getAttachmentRow(scope.env.DB, tenantId, id)) !== null,
          }),
      };
    },
  };

  const memory: MemoryAccess = {
    memory: {
      getNote: (id) => getNote(scope.env.DB, tenantId, id),
      getEpisode: (id) => getEpisode(scope.env.DB, tenantId, id),
      conversationOfMessage: async (id) => {
        const shard = await indexedCortex();
        return shard.conversationOfMessage(tenantId, id, bookmarkIn(shard));
      },
      saveNote: async (input) =>
        reached(await createNote(writes.env, tenantId, { ...input, sourceConversationId: conversationId })).note,
      updateNote: async (id, change) => reached(await updateNote(writes.env, { tenantId, id, change })).note,
      deleteNote: async (id) => reached(await deleteNote(writes.env, tenantId, id)).deleted,
    },
  };

  return {
    // CallScope
    tenantId,
    conversationId,
    progress,
    ...transcript,
    ...search,
    ...attachments,
    ...memory,
    // ToolAccess, kept here for the getter (spreading would freeze the list at this point).
    get activeTools() {
      return [...(record.head?.activeTools ?? []), ...projectTools];
    },
    activateTool: (name) =>
      record.updateHead((h) => ({
        next: h.activeTools.includes(name)
          ? null
          : { ...h, activeTools: [...h.activeTools, name].sort(), updatedAt: new Date().toISOString() },
        result: undefined,
      })),
  };
}
