// What a turn is given and where its events go: the types the intake (turn-intake.ts) and the
// runner (turn-runner.ts) share, here so that neither imports the other for them.
import type { ClientToolSpec } from "../../core/client-tools";
import type { TurnEvent } from "../../core/events";
import type { ContentBlock } from "../../core/types";

export interface TurnInput {
  content: ContentBlock[];
  /** Tools the turn's attached files need (their notes are already in `content`). */
  activate?: readonly string[];
  /** A retry with the same key gets the first turn's outcome instead of a second turn. */
  idempotencyKey?: string;
  /** Client tools defined for this turn only (core/client-tools.ts). */
  tools?: ClientToolSpec[];
  /**
   * Runs the last prompt again and supersedes the exchange it replaces (regenerate.ts); `content`
   * is then empty: the prompt's own content is saved again when the turn runs.
   */
  regenerate?: true;
  /** Set by the intake: aborted when the turn is stopped (turn-stops.ts). */
  signal?: AbortSignal;
}

export type TurnSink = (event: TurnEvent) => void;

/** Why a turn request runs nothing, answered with this status (a used key, a paused turn, results that do not fit). */
export interface TurnRefusal {
  status: 400 | 409 | 422;
  type: string;
  message: string;
}

/**
 * What a turn request (`send`, `postToolResults`) gets from the conversation: the running turn's
 * events as NDJSON (`stream`), a used key's first outcome (`replay`: no turn ran), a refusal before
 * anything ran, or `missing` when the conversation is not the tenant's.
 */
export type TurnAnswer =
  | { kind: "stream"; ndjson: ReadableStream<Uint8Array> }
  | { kind: "replay"; events: TurnEvent[] }
  | { kind: "refused"; refusal: TurnRefusal }
  | { kind: "missing" };
