// The tools' view of the conversation during one turn: every call closes over the caller's
// tenant (so no tool reaches another tenant's data) and reads the object's bindings at use.
import { EXTRACT_CHUNK_PAGES, type ExtractJob } from "../../core/jobs";
import type { StoredMessage } from "../../core/types";
import type { ReadQuery, ToolContext } from "../../agent/tools/registry";
import { lineIndexFor } from "../../services/attachments/inspect";
import { indexPdfPages } from "../../services/attachments/page-index";
import { r2RangeReader } from "../../services/attachments/r2-range-reader";
import { getAttachmentRow, markIndexing, toAttachment } from "../../services/attachments/store";
import { conversationOfMessage, countIndexedPages, searchCortex } from "../../services/cortex";
import { cortexFusionFor } from "../../services/semantic/select";
import { listConversationRows } from "../../services/conversation-list";
import { createNote, deleteNote, getEpisode, getNote, updateNote } from "../../services/memory/notes";
import type { ConversationRef } from "../../services/record/conversation-head";
import type { ObjectScope } from "./object-scope";
import type { ConversationRecord } from "./record";

export type ReadOwn = (ref: ConversationRef, query: ReadQuery) => Promise<{ messages: StoredMessage[]; messageCount: number } | null>;

export interface ToolContextParts {
  scope: ObjectScope;
  record: ConversationRecord;
  ref: ConversationRef;
  /** Tools the conversation's project files need, available without activation. */
  projectTools: readonly string[];
  /** This conversation's messages, through the same tenant check as the RPC. */
  readOwn: ReadOwn;
  progress(message: string): void;
}

export function toolContextFor({ scope, record, ref, projectTools, readOwn, progress }: ToolContextParts): ToolContext {
  return {
    tenantId: ref.tenantId,
    conversationId: ref.conversationId,
    get activeTools() {
      return [...(record.head?.activeTools ?? []), ...projectTools];
    },
    activateTool: (name) =>
      record.updateHead((h) => ({ next: h.activeTools.includes(name) ? null : { ...h, activeTools: [...h.activeTools, name].sort(), updatedAt: new Date().toISOString() }, result: undefined })),
    listConversations: async (limit, before) => (await listConversationRows(scope.env.DB, ref.tenantId, limit, before)).map(({ tenantId: _t, ...row }) => row),
    readConversation: (conversationId, query) =>
      conversationId === ref.conversationId
        ? readOwn(ref, query)
        : scope.env.CONVERSATION.get(scope.env.CONVERSATION.idFromName(conversationId)).readMessages({ tenantId: ref.tenantId, conversationId }, query),
    search: (query, limit, opts) => searchCortex(scope.env.DB, ref.tenantId, query, { limit, ...opts, fusion: cortexFusionFor(scope.env) }),
    progress,
    pageIndex: {
      status: async (attachmentId) => {
        const row = await getAttachmentRow(scope.env.DB, ref.tenantId, attachmentId);
        return { status: row?.indexStatus ?? "none", startedAt: row?.indexStartedAt ?? null, indexed: await countIndexedPages(scope.env.DB, ref.tenantId, attachmentId) };
      },
      start: async (attachmentId, pageCount) => {
        await markIndexing(scope.env.DB, ref.tenantId, attachmentId);
        const jobs: { body: ExtractJob }[] = [];
        for (let from = 1; from <= pageCount; from += EXTRACT_CHUNK_PAGES)
          jobs.push({ body: { kind: "extract", tenantId: ref.tenantId, attachmentId, fromPage: from, toPage: Math.min(pageCount, from + EXTRACT_CHUNK_PAGES - 1) } });
        for (let i = 0; i < jobs.length; i += 100) await scope.env.FOLD_QUEUE.sendBatch(jobs.slice(i, i + 100));
      },
      put: async (attachmentId, pages) => {
        const row = await getAttachmentRow(scope.env.DB, ref.tenantId, attachmentId);
        return row ? indexPdfPages(scope.env.DB, row, pages) : null;
      },
    },
    openAttachment: async (id) => {
      const row = await getAttachmentRow(scope.env.DB, ref.tenantId, id);
      const reader = row?.status === "ready" ? await r2RangeReader(scope.env.BUCKET, row.r2Key) : null;
      if (!row || !reader) return null;
      return { attachment: toAttachment(row), reader, lineIndex: () => lineIndexFor(scope.env.BUCKET, row.tenantId, row.id, row.r2Key) };
    },
    memory: {
      getNote: (id) => getNote(scope.env.DB, ref.tenantId, id),
      getEpisode: (id) => getEpisode(scope.env.DB, ref.tenantId, id),
      conversationOfMessage: (id) => conversationOfMessage(scope.env.DB, ref.tenantId, id),
      saveNote: (input) => createNote(scope.env.DB, ref.tenantId, { ...input, sourceConversationId: ref.conversationId }),
      updateNote: (id, change) => updateNote(scope.env.DB, ref.tenantId, id, change),
      deleteNote: (id) => deleteNote(scope.env.DB, ref.tenantId, id),
    },
  };
}
