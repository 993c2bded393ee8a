// Gathers one conversation's export from where each part lives: the head and compaction cards
// from its Durable Object (tenant-checked), the fold history from D1, attachments from D1 with
// their download paths, and the messages from the R2 record, batch by batch in seq order. Used by
// GET /v1/conversations/:id/export and by the tenant-wide export job. An export is one moment of
// the conversation: the head read first (getMeta) bounds it, so a turn, a regenerate or an upload
// while it is written stays out of it (its messages, cards and attachments alike); a delete while it
// is written fails it (cards, attachments or messages the purge took would otherwise just be missing).
import type { ConversationDO } from "../../durable-objects/conversation/conversation-do";
import { supersededBy, type TranscriptMessage } from "../../durable-objects/conversation/regenerate";
import type { SupersededRange } from "../../services/record/conversation-head";
import { listAttachmentRows } from "../../services/attachments/store";
import { listEpisodes } from "../../services/memory/notes";
import { readBatchesAfter } from "../../services/record/r2-record";
import type { ExportAttachment, ExportEpisode, ExportSource } from "../../services/transfer/export-format";

const PAGE = 500;

/** Null when the conversation is not the tenant's (or does not exist). `base` prefixes download URLs. */
export async function exportSourceFor(
  env: Env,
  of: { tenantId: string; conversationId: string; base?: string },
): Promise<ExportSource | null> {
  const { tenantId, conversationId, base = "" } = of;
  const ref = { tenantId, conversationId };
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(conversationId));
  const view = await stub.getMeta(ref);
  if (!view) return null;
  // When the head was read, for the attachments: a row records no seq of the note that brought it
  // into the conversation (only the note's text names the file, and the messages are read last),
  // so an upload belongs to this moment when it began by then. Taken after the answer came, so an
  // upload whose note the head already counts is never left out.
  const readAt = new Date().toISOString();
  // The fold history up to the head's summary: a fold that commits while the export is written
  // lists its episode in D1 after the head was read, and stays out of this moment as its summary does.
  const through = view.summarizedThroughMessage ?? 0;
  const episodes: ExportEpisode[] = [];
  for (let before: string | undefined; ; ) {
    const rows = await listEpisodes(env.DB, { tenantId, limit: PAGE, conversationId, before });
    episodes.push(
      ...rows
        .filter((r) => r.throughSeq <= through)
        .map((r) => ({
          id: r.id,
          foldJobId: r.foldJobId,
          throughSeq: r.throughSeq,
          summary: r.body,
          at: r.createdAt,
        })),
    );
    if (rows.length < PAGE) break;
    before = rows[rows.length - 1].id;
  }
  episodes.reverse();
  return {
    conversation: view as unknown as ExportSource["conversation"],
    episodes,
    cards: cardsOf(stub, { ref, lastSeq: view.lastSeq, readAt }),
    attachments: attachmentsOf(env, { tenantId, conversationId, base, readAt, stub }),
    messages: messagesOf(env, {
      tenantId,
      conversationId,
      superseded: view.superseded ?? [],
      lastSeq: view.lastSeq,
      stub,
    }),
  };
}

const deletedMeanwhile = (conversationId: string, what: string) =>
  new Error(`export of ${conversationId}: the conversation was deleted while it was exported (${what})`);

/**
 * After a part read from D1 or R2: the conversation must still be there. A delete tombstones the
 * object first and purges after, so an object that still answers had nothing of it purged yet.
 */
async function stillThere(
  stub: DurableObjectStub<ConversationDO>,
  ref: { tenantId: string; conversationId: string },
  what: string,
): Promise<void> {
  if (!(await stub.getMeta(ref))) throw deletedMeanwhile(ref.conversationId, what);
}

/**
 * The cards made through the head's lastSeq: a card records the last seq when it was made, so a
 * compaction of a turn that runs while the export is written sits after the moment and stays out.
 * A card at that very seq may still be later than the moment: a turn on a retired model logs its
 * model change before it saves its prompt. So one at lastSeq is kept only when it was made by the
 * moment the head was read (`readAt`, the rule the attachments follow).
 */
async function* cardsOf(
  stub: DurableObjectStub<ConversationDO>,
  of: { ref: { tenantId: string; conversationId: string }; lastSeq: number; readAt: string },
): AsyncGenerator<unknown> {
  const { ref, lastSeq, readAt } = of;
  const inMoment = (c: { afterSeq: number; at: string }) =>
    c.afterSeq < lastSeq || (c.afterSeq === lastSeq && c.at <= readAt);
  for (let after = 0; ; ) {
    const page = (await stub.timeline(ref, after, PAGE)) as Awaited<ReturnType<ConversationDO["timeline"]>>;
    // Answered as missing: a delete began (getMeta found it when the export started).
    if (!page) throw deletedMeanwhile(ref.conversationId, "its compaction cards");
    yield* page.cards.filter(inMoment);
    if (page.next === null) return;
    after = page.next;
  }
}

async function* attachmentsOf(
  env: Env,
  of: {
    tenantId: string;
    conversationId: string;
    base: string;
    readAt: string;
    stub: DurableObjectStub<ConversationDO>;
  },
): AsyncGenerator<ExportAttachment> {
  const { tenantId, conversationId, base, readAt, stub } = of;
  for (let after: string | undefined; ; ) {
    const rows = await listAttachmentRows(env.DB, {
      tenantId,
      conversationId,
      limit: PAGE,
      after,
      createdThrough: readAt,
    });
    for (const r of rows)
      yield {
        id: r.id,
        name: r.name,
        type: r.type,
        size: r.size,
        createdAt: r.createdAt,
        url: `${base}/v1/conversations/${conversationId}/attachments/${r.id}/content`,
      };
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1].id;
  }
  // A delete purges the rows before the record: rows it took would be missing without a word.
  await stillThere(stub, { tenantId, conversationId }, "its attachments");
}

/**
 * The record's messages through the head's lastSeq, each one a regenerate replaced marked as
 * GET …/messages marks it (an import keeps the marks). The marks are the head's of that moment, so
 * the messages stop there too: a regenerate's copy written since would otherwise follow the
 * exchange it replaced, unmarked.
 */
async function* messagesOf(
  env: Env,
  of: {
    tenantId: string;
    conversationId: string;
    superseded: SupersededRange[];
    lastSeq: number;
    stub: DurableObjectStub<ConversationDO>;
  },
): AsyncGenerator<TranscriptMessage> {
  const { tenantId, conversationId, superseded, lastSeq, stub } = of;
  // Every message through the head's lastSeq, in order: a record that lost batches meanwhile (the
  // conversation deleted while it was exported) fails the export rather than look complete.
  let next = 1;
  const gap = (to: number) =>
    new Error(
      `export of ${conversationId}: messages ${next}-${to} are not in the record (the conversation was deleted or changed while it was exported)`,
    );
  batches: for await (const batch of readBatchesAfter(env.BUCKET, { tenantId, conversationId, afterSeq: 0 }))
    for (const m of batch.messages) {
      if (m.seq > lastSeq) break batches;
      if (m.seq > next) throw gap(m.seq - 1);
      next = Math.max(next, m.seq + 1);
      const by = supersededBy({ superseded }, m.seq);
      yield by ? { ...m, superseded: true, supersededBy: by } : m;
    }
  if (next <= lastSeq) throw gap(lastSeq);
  // Messages come last in every format: a delete that began while anything was read fails here.
  await stillThere(stub, { tenantId, conversationId }, "its messages");
}
