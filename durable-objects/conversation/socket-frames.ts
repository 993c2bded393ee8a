// Client -> server websocket frames (`send`, `ping`, `stop`, `tool_results`), parsed and validated before anything runs.
// A bad frame gets an error frame naming the problem; the socket stays open.
import { z } from "zod";
import { idempotencyKeySchema } from "../../core/idempotency-key";
import { jsonTextTooDeep, jsonValueProblem, nestedTooDeep } from "../../core/json-guard";
import { regenerateField, regenerateProblems, toContentBlocks, turnContentSchema } from "../../core/turn-input";
import { SERVER_TOOL_NAMES } from "../../core/tenant-tool-rules";
import {
  takenToolNames,
  toolResultsBodySchema,
  turnToolsSchema,
  type ClientToolResult,
  type ClientToolSpec,
} from "../../core/client-tools";
import { toolRegistry } from "../../agent/tools";
import type { ContentBlock } from "../../core/types";
import { describeZodError } from "../../core/validation";
import { turnIdSchema } from "../../core/turn-stop";

export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/**
 * Frames longer than this (in UTF-16 units) are admitted (the key, its request token) before they
 * are read (sockets.ts): reading megabytes costs the object, so a revoked or rate-limited key's
 * large frames cost it nothing. Smaller ones are read first: their refusals name their `ref` and turn.
 */
export const ADMIT_BEFORE_READING = 64 * 1024;

export const clientFrameSchema = z
  .discriminatedUnion("type", [
    z
      .strictObject({
        type: z.literal("send"),
        content: turnContentSchema.optional(),
        attachments: z.array(z.string().max(64)).max(20).optional(),
        idempotencyKey: idempotencyKeySchema.optional(),
        tools: turnToolsSchema.optional(),
        regenerate: regenerateField,
        // The client's own name for this send: echoed to its socket alone, in `accepted` (with the
        // turnId) or in the error frame refusing it, so a client tells its turns from others'.
        ref: z.string().min(1).max(64).optional(),
      })
      .superRefine(regenerateProblems),
    z.strictObject({ type: z.literal("ping") }),
    // Stops the running turn (or the named one, when it is running), as POST /stop does.
    z.strictObject({ type: z.literal("stop"), turnId: turnIdSchema.optional() }),
    // The results of the paused turn's client tool calls, as POST /tool-results takes them.
    toolResultsBodySchema.extend({ type: z.literal("tool_results") }),
  ])
  .meta({ id: "SocketClientFrame", description: "A frame a client sends on /v1/conversations/{id}/ws (JSON text)." });

export type ClientFrame =
  | {
      type: "send";
      content: ContentBlock[];
      attachments: string[];
      idempotencyKey?: string;
      tools?: ClientToolSpec[];
      regenerate?: true;
      ref?: string;
    }
  | { type: "ping" }
  | { type: "stop"; turnId?: string }
  | { type: "tool_results"; results: ClientToolResult[] };

/** A refused frame: what is wrong, and the `ref` it carried (when it could be read), for its sender to match. */
export type RefusedFrame = { ok: false; error: string; ref?: string };

/**
 * The `ref` of a frame that parsed as JSON but is refused, when it is one a valid frame could carry
 * (1 to 64 characters of well-formed text): the sender of a `send` learns that this refusal answers
 * it, not another frame. A ref that is itself malformed is not echoed: the error would carry it.
 */
function refOf(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null || !("ref" in json)) return undefined;
  const ref = json.ref;
  return typeof ref === "string" && ref.length >= 1 && ref.length <= 64 && ref.isWellFormed() ? ref : undefined;
}

/**
 * A JSON frame that fails the checks: its problem, worded as the HTTP route words it (its `turnId:
 * null` says no turn started), with the frame's ref when it had a valid one.
 */
function refused(json: unknown, problem: string): RefusedFrame {
  const ref = refOf(json);
  return { ok: false, error: problem, ...(ref !== undefined ? { ref } : {}) };
}

export function parseClientFrame(data: string | ArrayBuffer): { ok: true; value: ClientFrame } | RefusedFrame {
  if (typeof data !== "string") return { ok: false, error: "frames must be JSON text" };
  // In UTF-8 bytes (a UTF-16 unit is 1 to 3 of them): encoded only when the length leaves it open.
  const tooLarge =
    data.length > MAX_FRAME_BYTES ||
    (data.length * 3 > MAX_FRAME_BYTES && new TextEncoder().encode(data).byteLength > MAX_FRAME_BYTES);
  if (tooLarge) return { ok: false, error: `frame larger than ${MAX_FRAME_BYTES} bytes` };
  // Measured on the text before it is parsed: parsing deep nesting is what costs (seconds for a few
  // MB of brackets, the whole object waiting), and the depth rule below would refuse it anyway.
  if (jsonTextTooDeep(data)) return { ok: false, error: nestedTooDeep("frame") };
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ok: false, error: "malformed JSON frame" };
  }
  const problem = jsonValueProblem(json, "frame");
  if (problem) return refused(json, problem);
  const parsed = clientFrameSchema.safeParse(json);
  if (!parsed.success) return refused(json, describeZodError(parsed.error));
  if (parsed.data.type === "ping") return { ok: true, value: { type: "ping" } };
  if (parsed.data.type === "stop")
    return { ok: true, value: { type: "stop", ...(parsed.data.turnId ? { turnId: parsed.data.turnId } : {}) } };
  if (parsed.data.type === "tool_results")
    return { ok: true, value: { type: "tool_results", results: parsed.data.results } };
  const { idempotencyKey, tools, regenerate, ref } = parsed.data;
  const clash = takenToolNames(tools, [...toolRegistry.names(), ...SERVER_TOOL_NAMES]);
  if (clash) return refused(json, clash);
  return {
    ok: true,
    value: {
      type: "send",
      content: parsed.data.content === undefined ? [] : toContentBlocks(parsed.data.content),
      attachments: parsed.data.attachments ?? [],
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      ...(tools ? { tools } : {}),
      ...(regenerate ? { regenerate } : {}),
      ...(ref !== undefined ? { ref } : {}),
    },
  };
}
