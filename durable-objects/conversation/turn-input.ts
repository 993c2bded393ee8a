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
  /** Set by the intake: aborted when the turn is stopped (turn-stops.ts). */
  signal?: AbortSignal;
}

export type TurnSink = (event: TurnEvent) => void;
