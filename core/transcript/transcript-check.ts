// What an imported transcript must be, message by message: Anthropic Messages content (a string or
// text / image / tool_use / tool_result blocks) in this API's stored shape, and every tool_use
// answered by a tool_result in the next user message of its thread (a sub-agent's segment is its
// own thread), and nothing the Messages API would refuse on replay (content-rules.ts, and here:
// citations in a user's text, a tool call before the first user message, a refusal's answered
// call, a stop reason on a user message). Nesting is bounded per message (MAX_MESSAGE_DEPTH): each
// block's fields as deep as any JSON body, so a tool call the platform stored imports back. The
// blocks are stored as they came (their keys in their order, less a request's `cache_control`), not
// as the schema re-emits them. The first problem is named with the message's index.
import { z } from "zod";
import { EMPTY_RESULT } from "../blank-text";
import { MODEL_IMAGE_TYPES } from "../image-limits";
import { jsonTextTooDeep, jsonValueProblem } from "../json-guard";
import {
  isServerToolResult,
  isThinkingBlock,
  SERVER_TOOL_RESULT_TYPES,
  type ContentBlock,
  type NewMessage,
  type StoredMessage,
} from "../types";
import { describeZodError } from "../validation";
import { HIDDEN_OR_CONTROL, VISIBLE } from "../visible-text";
import { checkImportedContent } from "./content-rules";
import { MAX_METADATA_DEPTH, messageTextTooDeep, messageTooDeep } from "./message-scanner";

// A prompt-caching breakpoint, as the Messages API takes one on a block (the SDK's
// CacheControlEphemeral): checked, then dropped from the stored copy (storedBlock).
const cacheControl = z
  .strictObject({ type: z.literal("ephemeral"), ttl: z.enum(["5m", "1h"]).optional() })
  .nullable()
  .optional();
const text = z.strictObject({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControl,
  citations: z.array(z.record(z.string(), z.unknown())).max(1_000).nullable().optional(),
});
// An image the Messages API fetches by address: an http(s) URL written as one, with no whitespace,
// control or hidden character. The string itself is checked (stored as sent, and the Markdown export
// prints it inside a line): URL parsing, zod's .url() too, drops a line break or a tab.
const imageUrl = z
  .string()
  .refine((url) => /^https?:\/\/\S+$/i.test(url) && !HIDDEN_OR_CONTROL.test(url) && parsesAsUrl(url), {
    message: "must be an http(s) URL with no whitespace, control or hidden characters",
  });
const image = z.strictObject({
  type: z.literal("image"),
  source: z.union([
    // Sizes, bytes and dimensions are checked by content-rules.ts, naming the block.
    z.strictObject({ type: z.literal("base64"), media_type: z.enum(MODEL_IMAGE_TYPES), data: z.string().min(1) }),
    z.strictObject({ type: z.literal("url"), url: imageUrl }),
  ]),
  cache_control: cacheControl,
});
// The Messages API's own patterns: an id or a tool name it would refuse could never be replayed, and
// neither can break the line the Markdown export prints it on (export-format.ts).
const blockId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[a-zA-Z0-9_-]+$/, "letters, digits, _ and - only (the Messages API's pattern)");
// The API's tool name pattern since 2025-08 (core/offline-model/rules/tools.ts NAME_PATTERN).
const toolName = z
  .string()
  .regex(/^[a-zA-Z0-9_-]{1,128}$/, "1 to 128 letters, digits, _ and - (the Messages API's pattern)");
const toolUse = z.strictObject({
  type: z.literal("tool_use"),
  id: blockId,
  name: toolName,
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
// `content` is optional in the API: a result without it, or with an empty list (which the API takes
// too), is stored as the empty result (storedBlock).
const toolResult = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1).max(200),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [text, image]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
// What a model's reply carries besides text and tool calls, kept as the API sent it (types.ts):
// thinking is never replayed outside the turn that produced it; server tool blocks replay verbatim
// (less a request's `cache_control`, which the SDK's server tool block params all take).
const thinking = z.strictObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().min(1) });
const redactedThinking = z.strictObject({ type: z.literal("redacted_thinking"), data: z.string().min(1) });
const serverToolUse = z.strictObject({
  type: z.literal("server_tool_use"),
  id: blockId,
  name: toolName,
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
  caller: z.unknown().optional(),
});
const serverResult = (type: (typeof SERVER_TOOL_RESULT_TYPES)[number]) =>
  z.strictObject({
    type: z.literal(type),
    tool_use_id: blockId,
    content: z.unknown(),
    cache_control: cacheControl,
    caller: z.unknown().optional(),
  });
const block = z.discriminatedUnion("type", [
  text,
  image,
  toolUse,
  toolResult,
  thinking,
  redactedThinking,
  serverToolUse,
  ...SERVER_TOOL_RESULT_TYPES.map(serverResult),
]);
const count = z.number().int().min(0);
const usage = z.strictObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  thinking_tokens: count.optional(),
  web_search_requests: count.optional(),
  web_fetch_requests: count.optional(),
  cost_usd: z.number().min(0).optional(),
});

/**
 * A sub-agent's name, which the Markdown export prints in a message's heading: the rule of a name
 * people read (workers/chat/validate.ts visibleName), checked but not trimmed, as the message is
 * stored as it came.
 */
const agentName = z
  .string()
  .max(200)
  .refine((v) => !HIDDEN_OR_CONTROL.test(v), "no control characters, line separators or bidi overrides")
  .refine((v) => VISIBLE.test(v), "must contain a visible character");

/** A message as Anthropic's API takes it, or as this API exports it (its id and seq are reassigned). */
export const importedMessageSchema = z.strictObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string().min(1, "must not be empty"), z.array(block).min(1, "must not be empty")]),
  id: z.string().max(200).optional(),
  seq: z.number().int().optional(),
  createdAt: z.iso.datetime().optional(),
  usage: usage.optional(),
  model: z.string().max(200).optional(),
  stopReason: z.string().max(100).nullable().optional(),
  // An export's record of the prefix each thinking block followed: kept, so the block goes back only
  // while the imported conversation's requests still begin as they did (core/thinking-guard.ts).
  thinkingPrefixes: z.array(z.string().max(32)).max(1_000).optional(),
  // An export's record of the effort a between_tools reply ran at (kept for its export again).
  betweenToolsEffort: z.string().max(20).optional(),
  agent: z
    .strictObject({ segment: z.string().min(1).max(200), name: agentName, toolUseId: z.string().max(200) })
    .optional(),
  // An export's mark of a message a regenerate replaced (superseded.ts), as GET …/messages shows it.
  superseded: z.literal(true).optional(),
  supersededBy: z.string().min(1).max(200).optional(),
});

/**
 * A validated message ready to store: everything but the id and seq the conversation assigns, and
 * the marks of a replaced exchange (superseded.ts), which are not stored in the message.
 */
export type ImportedMessage = NewMessage & { createdAt?: string; sourceId?: string; supersededBy?: string };

export class TranscriptError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * A validated block as stored, its keys in the order they came: without the `cache_control` a
 * request may carry (stored messages never do: the replay sets its own breakpoints, core/replay.ts,
 * and imported ones could pass the API's 4), here and in a tool_result's blocks; a tool_result
 * without `content`, or with an empty list of blocks, gets the empty result the replay sends for a
 * blank one (EMPTY_RESULT).
 */
function storedBlock(b: unknown): unknown {
  if (!isObject(b)) return b;
  const kept = Object.fromEntries(Object.entries(b).filter(([k]) => k !== "cache_control"));
  if (kept.type !== "tool_result") return kept;
  if (kept.content === undefined || (Array.isArray(kept.content) && !kept.content.length)) kept.content = EMPTY_RESULT;
  else if (Array.isArray(kept.content)) kept.content = kept.content.map(storedBlock);
  return kept;
}

/**
 * jsonValueProblem for one message: each of its fields, and each content block's fields, measured
 * from its own level, so a block's field (a tool call's `input`) may nest MAX_JSON_DEPTH levels,
 * as in any JSON body. The text was bounded by MAX_MESSAGE_DEPTH before it was parsed.
 */
function messageValueProblem(value: unknown, where: string): string | null {
  if (!isObject(value)) return jsonValueProblem(value, where);
  for (const [k, v] of Object.entries(value)) {
    if (!k.isWellFormed()) return `${where}: a key is not well-formed Unicode (a lone surrogate)`;
    const blocks = k === "content" && Array.isArray(v) ? v : null;
    if (!blocks) {
      const problem = jsonValueProblem(v, `${where}.${k}`);
      if (problem) return problem;
      continue;
    }
    for (const [j, b] of blocks.entries()) {
      const fields: [string, unknown][] = isObject(b) ? Object.entries(b) : [["", b]];
      for (const [bk, bv] of fields) {
        if (!bk.isWellFormed()) return `${where}.content.${j}: a key is not well-formed Unicode (a lone surrogate)`;
        const problem = jsonValueProblem(bv, bk ? `${where}.content.${j}.${bk}` : `${where}.content.${j}`);
        if (problem) return problem;
      }
    }
  }
  return null;
}

/**
 * The lines of an export that are not messages (JSONL's `conversation`, `episode`, `card` and
 * `attachment` lines), skipped but watched: an import is one conversation. A tenant-wide export
 * file holds several, each from its `conversation` line; read as one transcript their messages
 * would merge (seqs starting again midway), so a second conversation is refused, naming its line.
 */
export class ExportLines {
  private conversations = 0;
  private lastSeq: unknown;

  /** A skipped line (its `type` is not `message`); `where` names it ("line 7"). */
  add(line: { type: unknown; lastSeq?: unknown }, where: string): void {
    if (line.type !== "conversation") return;
    if (++this.conversations > 1)
      throw new TranscriptError(
        `${where}: a second conversation; an import takes one conversation (this file holds several)`,
      );
    this.lastSeq = line.lastSeq;
  }

  /**
   * Whether the body is the export of a conversation with no messages: its conversation line says
   * so (`lastSeq` 0). An export cut before its messages says otherwise, and is refused as empty.
   */
  get emptyExport(): boolean {
    return this.conversations > 0 && this.lastSeq === 0;
  }
}

/**
 * Parses and checks one message's JSON text; `where` names it ("messages[3]" or "line 4"). Null
 * for a line of an export's metadata (a `type` other than `message`), whose type goes to `skipped`:
 * its type is read first, so only a message meets the message checks (a `conversation` line
 * copies a paused turn's calls one level deeper than their message holds them: MAX_METADATA_DEPTH).
 */
function parsesAsUrl(text: string): boolean {
  try {
    return !!new URL(text).hostname;
  } catch {
    return false;
  }
}

export function parseImportedMessage(
  raw: string,
  where: string,
  skipped?: (line: { type: unknown; lastSeq?: unknown }) => void,
): ImportedMessage | null {
  // Measured before parsing: a line of nothing but brackets would cost hundreds of MB to parse.
  // Past what a message or a metadata line may nest, it is neither.
  if (jsonTextTooDeep(raw, MAX_METADATA_DEPTH)) throw new TranscriptError(messageTooDeep(where));
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new TranscriptError(
      `${where}: malformed JSON (${err instanceof Error ? err.message.slice(0, 100) : "parse error"})`,
    );
  }
  // JSONL exports carry the conversation's metadata on lines of their own type; they are not messages.
  if (isObject(value) && "type" in value && value.type !== "message") {
    skipped?.(value as { type: unknown; lastSeq?: unknown });
    return null;
  }
  if (messageTextTooDeep(raw)) throw new TranscriptError(messageTooDeep(where));
  const problem = messageValueProblem(value, where);
  if (problem) throw new TranscriptError(problem);
  const parsed = importedMessageSchema.safeParse(value);
  if (!parsed.success) throw new TranscriptError(describeZodError(parsed.error, where));
  const m = parsed.data;
  // Stored as it came, not as zod re-emits it (in the schema's key order): the schema only checks.
  const given = value as { content: unknown; usage?: unknown; agent?: unknown };
  // Role checks that name the block as given (checkImportedContent drops blank assistant text,
  // which shifts the indices): the API refuses an image in an assistant turn ("'image' blocks are
  // not permitted within assistant turns", epam/ai-dial-adapter-bedrock#306), so every later
  // turn's replay would fail. The import takes no search_result block at all (the union above).
  if (m.role === "assistant" && Array.isArray(m.content)) {
    const j = m.content.findIndex((b) => b.type === "image");
    if (j >= 0) throw new TranscriptError(`${where}.content.${j}: an image block belongs in a user message`);
  }
  const checked = checkImportedContent(m.role, {
    content:
      typeof m.content === "string"
        ? [{ type: "text", text: m.content }]
        : ((given.content as unknown[]).map(storedBlock) as ContentBlock[]),
    where,
    fromString: typeof m.content === "string",
  });
  if (!checked.ok) throw new TranscriptError(checked.problem);
  const content = checked.content;
  for (const b of content) {
    if (b.type === "tool_use" && m.role !== "assistant")
      throw new TranscriptError(`${where}: a tool_use block belongs in an assistant message`);
    if (b.type === "tool_result" && m.role !== "user")
      throw new TranscriptError(`${where}: a tool_result block belongs in a user message`);
    if (m.role !== "assistant" && (isThinkingBlock(b) || b.type === "server_tool_use" || isServerToolResult(b)))
      throw new TranscriptError(`${where}: a ${b.type} block belongs in an assistant message`);
    // The API (version 2026-10-21, which the SDK sends) refuses citations in a user message.
    const cited =
      b.type === "text"
        ? !!b.citations?.length
        : b.type === "tool_result" && Array.isArray(b.content)
          ? b.content.some((x) => x.type === "text" && !!x.citations?.length)
          : false;
    if (m.role !== "assistant" && cited)
      throw new TranscriptError(
        `${where}: citations belong in an assistant message's text, not a user's or a tool result's`,
      );
  }
  // A stop reason is a reply's: on a user message the replay would take it for one (a "refusal"
  // there would leave turns out). A refusal's call that a result answers: PairingCheck.
  if (m.role === "user" && m.stopReason != null)
    throw new TranscriptError(`${where}: stopReason belongs to an assistant message`);
  const out: ImportedMessage = { role: m.role, content };
  // As the API writes one (milliseconds, "Z"): orders by createdAt compare it as text (search-index.ts BY_RANK).
  if (m.createdAt) out.createdAt = new Date(m.createdAt).toISOString();
  if (m.usage) out.usage = given.usage as typeof m.usage;
  if (m.model) out.model = m.model;
  if (m.stopReason !== undefined) out.stopReason = m.stopReason;
  if (m.thinkingPrefixes && m.thinkingPrefixes.length === content.filter(isThinkingBlock).length)
    out.thinkingPrefixes = m.thinkingPrefixes;
  if (m.betweenToolsEffort && content.some(isThinkingBlock)) out.betweenToolsEffort = m.betweenToolsEffort;
  if (m.agent) out.agent = given.agent as typeof m.agent;
  if ((m.superseded === true) !== (m.supersededBy !== undefined))
    throw new TranscriptError(`${where}: superseded and supersededBy go together (a replaced message has both)`);
  if (m.id !== undefined) out.sourceId = m.id;
  if (m.supersededBy !== undefined) out.supersededBy = m.supersededBy;
  return out;
}

/**
 * Every tool_use followed in its thread by a user message (or by nothing: the transcript ends on
 * it), every tool_result answering a call of the message right before it in that thread, before
 * any other content of its message. A call left without its result (a turn paused on client
 * tools, or one that died mid-step: what the platform's own exports carry) is taken: the replay
 * answers it with the interrupted-call result (core/replay.ts), as in the conversation it came from.
 * A replay starts at a user message (the assistant messages before the first are left out), so no
 * tool call may come before it; and a refusal is left out too, so no later message may answer its calls.
 */
export class PairingCheck {
  private readonly open = new Map<string, { ids: Set<string>; where: string; refusal: boolean }>();
  /** Whether the conversation's own thread (not a sub-agent's) has had a user message yet. */
  private userSeen = false;
  /** The tool_use ids of the messages the model is sent (not superseded, not a sub-agent's): one request holds them all. */
  private readonly replayedCalls = new Set<string>();
  private count = 0;

  add(
    m: Pick<StoredMessage, "role" | "content" | "agent" | "stopReason"> & { supersededBy?: string },
    where: string,
  ): void {
    this.count++;
    if (!m.agent && m.role === "user") this.userSeen = true;
    if (!m.agent && !this.userSeen && m.content.some((b) => b.type === "tool_use"))
      throw new TranscriptError(
        `${where}: a tool_use before the transcript's first user message; the replay starts at a user's prompt, so its call would be cut off from its result`,
      );
    if (!m.agent && m.supersededBy === undefined)
      for (const b of m.content) {
        if (b.type !== "tool_use") continue;
        if (this.replayedCalls.has(b.id))
          throw new TranscriptError(
            `${where}: tool_use id ${b.id} is used by an earlier message too; the Messages API needs each id once per conversation`,
          );
        this.replayedCalls.add(b.id);
      }
    const thread = m.agent?.segment ?? "";
    const pending = this.open.get(thread);
    const answered = new Set(m.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])));
    if (pending && m.role !== "user")
      throw new TranscriptError(
        `${pending.where}: tool_use ${[...pending.ids][0]} is followed by another assistant message (${where}); its tool_result goes in a user message between them`,
      );
    if (pending?.refusal && answered.size)
      throw new TranscriptError(
        `${pending.where}: a reply with stopReason "refusal" cannot hold a tool_use that a tool_result answers (${where}); the replay leaves the refusal out`,
      );
    for (const id of answered)
      if (!pending?.ids.has(id))
        throw new TranscriptError(`${where}: tool_result for ${id}, which the previous assistant message did not call`);
    if (answered.size !== m.content.filter((b) => b.type === "tool_result").length)
      throw new TranscriptError(`${where}: two tool_results for one tool_use`);
    // The Messages API takes a user message's tool_result blocks only before its other content.
    const lead = m.content.findIndex((b) => b.type !== "tool_result");
    if (answered.size && lead >= 0 && m.content.slice(lead).some((b) => b.type === "tool_result"))
      throw new TranscriptError(`${where}: tool_result blocks must come before any other content of the message`);
    this.open.delete(thread);
    const calls = m.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
    if (calls.length) {
      const ids = new Set(calls);
      if (ids.size !== calls.length) throw new TranscriptError(`${where}: two tool_use blocks share an id`);
      this.open.set(thread, { ids, where, refusal: m.stopReason === "refusal" });
    }
  }

  /**
   * The transcript ended: it must not be empty (a last call without its result is a paused or
   * cut-off turn), unless it is an export's: a conversation exported before its first message
   * imports back as an empty conversation.
   */
  end(of: { exported?: boolean } = {}): void {
    if (!this.count && !of.exported)
      throw new TranscriptError("messages: none; a transcript needs at least one message");
  }
}
