/**
 * The errors the offline model served because a `@model-error` directive asked for them, per
 * isolate and bounded. Fault tests read it to prove an injection really happened (a transient
 * fault the SDK retried away leaves no other trace), and their report counts what was served.
 */
import type { ModelErrorStatus } from "./directives";
import { latestRealUserIndex } from "./turn";
import { textOf, type WireMessage } from "./wire";

export interface ServedFault {
  status: ModelErrorStatus;
  /** The SDK's retry number of the failed attempt (0 = the first attempt). */
  attempt: number;
  /** The directive line that fired and up to 300 chars of the user text before it: enough for a test to tell its case apart. */
  prompt: string;
}

const MAX_FAULTS = 1_000;
const PROMPT_CHARS = 300;
const log: ServedFault[] = [];

export function recordFault(status: ModelErrorStatus, attempt: number, messages: readonly WireMessage[]): void {
  const index = latestRealUserIndex(messages);
  const text = index >= 0 ? textOf(messages[index]) : "";
  const at = text.lastIndexOf("@model-error");
  const end = text.indexOf("\n", at);
  log.push({
    status,
    attempt,
    prompt: at < 0 ? "" : text.slice(Math.max(0, at - PROMPT_CHARS), end < 0 ? text.length : end),
  });
  if (log.length > MAX_FAULTS) log.shift();
}

/** The faults served so far in this isolate, oldest first (a copy). */
export function servedFaults(): ServedFault[] {
  return [...log];
}
