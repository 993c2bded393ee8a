// Stored messages for tests that build requests from a history: ids and seqs in order of making.
import type { ContentBlock, StoredMessage } from "../core/types";

let seq = 0;

/** A stored message, the next seq; `stopReason` only when given. */
export const storedMessage = (
  role: "user" | "assistant",
  content: ContentBlock[],
  stopReason?: string,
): StoredMessage => ({
  id: `msg_${++seq}`,
  seq,
  role,
  content,
  createdAt: "2026-01-01T00:00:00Z",
  ...(stopReason ? { stopReason } : {}),
});
