// An import's commit: a conversation created from a staged, already validated transcript, without
// a model call. The batches go to R2 and the index before the head, so the conversation appears
// whole or not at all; then the cortex indexes it and folding starts in the background, one fold
// per threshold of growth as if it had grown turn by turn (fold-coordinator.ts keeps dispatching).
// A DELETE that finds it listed while the batches are written cuts the commit short (`missing`).
import { sortableId } from "../../core/ids";
import { SupersededRanges } from "../../core/transcript/superseded";
import type { ConversationView } from "../../services/record/conversation-head";
import type { ConversationRef } from "../../services/record/conversation-head";
import { readStagedChunk, type StagedImport } from "../../services/transfer/import-staging";
import type { FoldCoordinator } from "./fold-coordinator";
import type { IndexOutbox } from "./index-outbox";
import { missingIfGone } from "./conversation-delete";
import type { ObjectScope } from "./object-scope";
import { storedMessage, writeImportedBatch, type ConversationRecord, type HeadInit } from "./record";

/** The new conversation, or `missing`: deleted while it was committed, and nothing of it is left. */
export type ImportCommit = { kind: "created"; view: ConversationView } | { kind: "missing" };

export async function commitImport(
  parts: { scope: ObjectScope; record: ConversationRecord; outbox: IndexOutbox; fold: FoldCoordinator },
  request: { ref: ConversationRef; init: HeadInit; staged: StagedImport },
): Promise<ImportCommit> {
  const { ref, init, staged } = request;
  const { scope, record, outbox, fold } = parts;
  const importedAt = new Date().toISOString();
  const creating = record.create(ref, init, async (head) => {
    let seq = 1;
    const superseded = new SupersededRanges();
    for (let n = 0; n < staged.chunks; n++) {
      const messages = await readStagedChunk(scope.env.BUCKET, {
        tenantId: ref.tenantId,
        importId: staged.importId,
        chunk: n,
      });
      const stored = messages.map((m, i) =>
        storedMessage(m, { id: sortableId("msg"), seq: seq + i, createdAt: m.createdAt ?? importedAt }),
      );
      messages.forEach((m, i) => superseded.add(m, stored[i]));
      await writeImportedBatch(scope, head, stored);
      seq += stored.length;
    }
    // The exchanges a regenerate replaced stay replaced: out of every request, as in the export.
    // Sealed blocks it carries (thinking, server tool results, citations) were issued to whoever
    // ran it, or forged: they never go back to the model (core/replay-rules.ts).
    if (seq > 1) head.importedThroughMessage = seq - 1;
    const ranges = superseded.ranges();
    if (ranges.length) head.superseded = ranges;
    for (const r of ranges) scope.store.zeroChars(r.fromSeq, r.toSeq);
  });
  // Cut short by a delete (its writes refused): the purge removes what landed, listing row included.
  const made = await missingIfGone(creating.then((view) => ({ kind: "created", view }) as const));
  if (made.kind === "missing") return made;
  scope.store.touchActivity(importedAt);
  outbox.remind();
  scope.ctx.waitUntil(outbox.pending());
  scope.ctx.waitUntil(fold.maybeDispatch());
  return made;
}
