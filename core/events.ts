// The streaming vocabulary shared by websocket frames and SSE event names (see API.md).
import type { StoredMessage, Usage } from "./types";

/** Which sub-agent of the turn an event comes from (workflow mode); absent: the master agent. */
export interface EventAgent {
  segment: string;
  name: string;
}

/** A sub-agent's loop emits the same events as the master's, each tagged with `agent`. */
export type TurnEvent = (
  /** `replayed`: the first outcome of an Idempotency-Key answered again; no turn ran. */
  | { type: "turn_start"; turnId: string; replayed?: true }
  | { type: "delta"; turnId: string; text: string }
  /**
   * The model's thinking, streamed as it comes: `block` groups the deltas of one thinking block (its
   * index in the reply); an empty `text` opens a block (all a client sees under display "omitted");
   * `redacted` marks reasoning the API returned encrypted.
   */
  | { type: "thinking"; turnId: string; block: number; text: string; redacted?: true }
  | { type: "tool_use"; turnId: string; id: string; name: string; input: unknown }
  | { type: "tool_result"; turnId: string; tool_use_id: string; name: string; is_error: boolean; chars: number; preview: string }
  | { type: "progress"; turnId: string; message: string }
  | { type: "message"; turnId: string; message: StoredMessage }
  | { type: "compaction_started"; turnId: string; tokens: number; budgetTokens: number; forced: boolean }
  | {
      type: "compaction";
      turnId: string;
      forced: boolean;
      targets: number;
      tokensBefore: number;
      tokensAfter: number;
      tokensSaved: number;
      durationMs: number;
      summarized: "model" | "fallback";
      details: { index: number; block: number; kind: string; before: number; after: number }[];
    }
  | {
      type: "turn_end";
      turnId: string;
      stop_reason: string;
      usage: Usage;
      timing: { serverMs: number; modelMs: number; queuedMs: number };
    }
  | { type: "error"; turnId?: string; error: { type: string; message: string; status?: number; requestId?: string } }
  /** The model declined to answer: nothing of the refused turn is replayed to it again; `fallbackModel` answers instead when the settings name one. */
  | { type: "refusal"; turnId: string; model: string; category: string | null; explanation: string | null; fallbackModel?: string }
  /** The turn runs on another model than the settings named: `retired` (the settings move with it) or `refusal_fallback` (this turn only). */
  | { type: "model_changed"; turnId: string; from: string; to: string; reason: "retired" | "refusal_fallback"; retiredOn?: string }
  /** A streamed reply failed mid-way (overloaded, internal error) and is asked again after `delayMs`; text already streamed is kept. */
  | { type: "retry"; turnId: string; attempt: number; delayMs: number; error: { type: string; message: string } }
  /**
   * A regenerate replaced the last exchange: the messages `fromSeq`..`toSeq` are superseded by the
   * exchange whose user message is `supersededBy` (kept in the transcript, never replayed again).
   */
  | { type: "superseded"; turnId: string; fromSeq: number; toSeq: number; messageIds: string[]; supersededBy: string }
  /** The turn paused on client tools: post their results to /tool-results before `expiresAt`. */
  | { type: "requires_action"; turnId: string; calls: { id: string; name: string; input: unknown }[]; expiresAt: string }
) & { agent?: EventAgent };

export function toSse(event: TurnEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
