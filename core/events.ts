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
  | { type: "error"; turnId?: string; error: { type: string; message: string; status?: number } }
  /** The turn paused on client tools: post their results to /tool-results before `expiresAt`. */
  | { type: "requires_action"; turnId: string; calls: { id: string; name: string; input: unknown }[]; expiresAt: string }
) & { agent?: EventAgent };

export function toSse(event: TurnEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
