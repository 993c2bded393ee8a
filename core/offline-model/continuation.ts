/**
 * Continuations without prefill. Current models refuse a final assistant message, so a client
 * continues a cut-off reply with a user message asking the model to go on from where its reply
 * ended (https://platform.claude.com/docs/en/build-with-claude/streaming, error recovery for Claude
 * 4.6 and later; https://platform.claude.com/docs/en/models/sonnet-5-5/migration-guide, continuations;
 * https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons). The offline model
 * takes such a message as a continuation, not as a new prompt: it replies as it does to a prefill
 * and reads no directives from it.
 *
 * A continuation request is a user message made only of text, right after an assistant message,
 * that asks to continue / resume / carry on / keep going / pick up AND points at the previous reply
 * having stopped: "where you left off" (or stopped), "your previous response was interrupted",
 * "you were cut off", "it ended with", "was truncated". "Let's continue where we left off" is a new
 * prompt: it speaks of us, not of the reply.
 */
import type { WireBlock, WireMessage } from "./wire";

const CONTINUE = /\b(continue|continuing|resume|carry on|keep going|pick up|proceed)\b/i;
const STOPPED = [
  /\bwhere you (?:left off|stopped|were (?:interrupted|cut off)|ended|got cut off)\b/i,
  /\b(?:your|the) (?:previous |last |prior |earlier )?(?:response|reply|answer|message|output)\b[^.?!]*\b(?:interrupted|cut off|cut short|truncated|stopped|ended with|was incomplete)\b/i,
  /\byou (?:were|got|was) (?:interrupted|cut off|cut short|truncated)\b/i,
];

/** Whether a user text asks the model to continue its own cut-off reply. */
export function asksToContinue(text: string): boolean {
  return CONTINUE.test(text) && STOPPED.some((pattern) => pattern.test(text));
}

const blocks = (message: WireMessage): WireBlock[] =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;

/** Whether messages[index] is a continuation request (see the header). */
export function isContinuationRequest(messages: readonly WireMessage[], index: number): boolean {
  const message = messages[index];
  if (message?.role !== "user" || index === 0 || messages[index - 1].role !== "assistant") return false;
  const content = blocks(message);
  if (content.length === 0 || !content.every((block) => block.type === "text")) return false;
  return asksToContinue(content.map((block) => String(block.text ?? "")).join("\n"));
}
