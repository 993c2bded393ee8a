// An upload's note joining the conversation (conversation-do.ts addAttachmentNote), told so that
// the upload route knows whether the file may be purged: a note may never name a purged file.
import type { StoredMessage } from "../../core/types";
import { ConversationGone, missingIfGone } from "./conversation-delete";
import type { PausedTurns } from "./paused-turn";
import type { ConversationRecord } from "./record";

/**
 * `unconfirmed`: the note was kept (deferred behind a paused step) or may have been (an append
 * whose answers were lost lands all the same, and the next write adopts it), but a write after it
 * failed: the file must stay. An error thrown instead means nothing of the note was kept
 * (ConversationGone: a delete began, and takes the conversation, notes and all).
 */
export type NoteAnswer =
  | { kind: "saved"; message: StoredMessage }
  | { kind: "deferred" }
  | { kind: "unconfirmed" }
  | { kind: "missing" };

type NoteParts = {
  paused: Pick<PausedTurns, "deferNote">;
  record: Pick<ConversationRecord, "activateTools" | "append">;
};

/** A delete that began before the note was written, or while it was: no note, the route discards the file. */
export function addNote(parts: NoteParts, note: string, tools: readonly string[]): Promise<NoteAnswer> {
  return missingIfGone(writeNote(parts, note, tools));
}

async function writeNote(
  parts: NoteParts,
  note: string,
  tools: readonly string[],
): Promise<Exclude<NoteAnswer, { kind: "missing" }>> {
  const { paused, record } = parts;
  const unconfirmed = (err: unknown) => {
    // Refused or cut short by a delete: nothing of the note is kept, whatever landed goes with the
    // conversation, so the caller must not keep the file for it.
    if (err instanceof ConversationGone) throw err;
    console.error("attachment note unconfirmed", err);
    return { kind: "unconfirmed" } as const;
  };
  // Between a paused step's tool_use and its results nothing may be saved: the note follows them.
  // Notes a failed write kept are still deferred: the note goes behind them, in upload order.
  if (await paused.deferNote(note))
    return record.activateTools(tools).then(() => ({ kind: "deferred" }) as const, unconfirmed);
  // Before the note: a failure here keeps nothing.
  await record.activateTools(tools);
  return record
    .append([{ role: "user", content: [{ type: "text", text: note }] }])
    .then(([message]) => ({ kind: "saved", message }) as const, unconfirmed);
}
