/**
 * Token counting for context management and for the offline model.
 *
 * STAND-IN APPROXIMATION: Claude's tokenizer is not public. We count with a
 * real BPE tokenizer, OpenAI's `cl100k_base` (via js-tiktoken), as a stated
 * stand-in. Its counts are in the same range as Claude's for English prose and
 * code but are not equal to them; treat every number here as an estimate and
 * keep safety margins when comparing against a real model's context window.
 *
 * Only the cl100k rank table is imported (`js-tiktoken/lite` + one rank file)
 * so bundles carry one table, not all of them.
 */
import { Tiktoken } from "js-tiktoken/lite";
import cl100kBase from "js-tiktoken/ranks/cl100k_base";
import { fnvLanes } from "./ids";
import { fetchedDocumentData, fetchedDocumentTokens, serverResultReadable } from "./render";
import { wholeAt } from "./text-cut";
import type { ServerToolResultBlock } from "./types";

/** Fixed cost of an image (or binary document) block: images are billed by pixels, not text. */
export const IMAGE_TOKENS = 1_600;
/** Role/turn framing each message adds around its content. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

// Building the encoder parses the whole rank table (~0.5 s), so do it on first use, not on import.
let encoder: Tiktoken | undefined;
function getEncoder(): Tiktoken {
  encoder ??= new Tiktoken(cl100kBase);
  return encoder;
}

// js-tiktoken's merge loop is quadratic in the length of one pre-tokenized piece, and cl100k's
// pre-tokenizer makes one piece of a whole run of letters (a word, a paragraph of CJK without
// spaces, minified data's identifiers), of punctuation or of whitespace. A 256-character piece
// already costs ~12 ms (about 50 µs a character), so a 256 KiB tool result of one such run took
// seconds of CPU to count, on every request that carried it. Cutting those runs into 32-character
// slices keeps the cost near linear (2 to 3 µs a character of ASCII letters, 7 to 8 times faster:
// `npm run bench:counting`). For letters and whitespace that adds at most a token per cut; long
// runs of repeated punctuation, which cl100k has long tokens for, count up to 2.4 times as many.
// Both are overcounts, inside the stand-in's error, and an overcount only folds or stubs sooner.
// Runs of digits, and of letters mixed with digits, are pieces of a few characters already.
const MAX_RUN = 32;
const LONG_RUN = new RegExp(`\\p{L}{${MAX_RUN + 1},}|[^\\s\\p{L}\\p{N}]{${MAX_RUN + 1},}|\\s{${MAX_RUN + 1},}`, "gu");

function encodeSafely(text: string): number[] {
  // Special-token text such as "<|endoftext|>" in user content is plain text, never an error.
  return getEncoder().encode(text, [], []);
}

/** The text's pieces in order: long runs cut into MAX_RUN slices, the text between them whole. */
function* boundedPieces(text: string): Generator<string> {
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    const start = match.index ?? 0;
    if (start > last) yield text.slice(last, start);
    yield* sliceRun(match[0]);
    last = start + match[0].length;
  }
  if (last < text.length) yield text.slice(last);
}

function countUncached(text: string): number {
  let total = 0;
  for (const piece of boundedPieces(text)) total += encodeSafely(piece).length;
  return total;
}

/** The tokens countUncached counts, in order (each piece encoded on its own, as counted). */
function encodeBounded(text: string): number[] {
  const tokens: number[] = [];
  for (const piece of boundedPieces(text)) for (const token of encodeSafely(piece)) tokens.push(token);
  return tokens;
}

function* sliceRun(run: string): Generator<string> {
  let i = 0;
  while (i < run.length) {
    // Never split a surrogate pair: half a character would count as a replacement char.
    const end = wholeAt(run, Math.min(i + MAX_RUN, run.length));
    yield run.slice(i, end);
    i = end;
  }
}

// The same immutable history is re-counted on every turn, so long strings are
// memoized. Short strings are cheaper to encode than to look up.
const MEMO_MIN_LENGTH = 256;
// Every memoized string is keyed by a content hash, never by itself, so the memo never pins old
// history in a 128 MB isolate (50,000 strings of 2 KB as keys would be 100 MB or more). It holds
// enough entries for one long request: the offline model counts each request three times, so at
// 2,000 entries a tool loop of more than 2,000 long results cycled the memo and re-encoded every
// block on every pass (4,000 steps: 3.1 s a call). An entry (its ~22-character key and the Map's
// slot) measured about 200 bytes in Node 22, so a full memo is about 10 MB.
const MEMO_MAX_ENTRIES = 50_000;
const memo = new Map<string, number>();

function memoKey(text: string): string {
  // Two independent 32-bit FNV-1a lanes plus the length: a collision needs all three to agree.
  const [a, b] = fnvLanes(text);
  return `\u0000#${text.length}:${a.toString(36)}:${b.toString(36)}`;
}

/** Number of cl100k_base tokens in `text` (see the stand-in note at the top of this file). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length < MEMO_MIN_LENGTH) return countUncached(text);
  const key = memoKey(text);
  const hit = memo.get(key);
  if (hit !== undefined) {
    // Re-insert so Map iteration order doubles as least-recently-used order.
    memo.delete(key);
    memo.set(key, hit);
    return hit;
  }
  const count = countUncached(text);
  memo.set(key, count);
  if (memo.size > MEMO_MAX_ENTRIES) memo.delete(memo.keys().next().value as string);
  return count;
}

/**
 * Longest prefix of `text` that fits in `maxTokens` tokens. Used to cut a reply
 * at max_tokens the way a model stops mid-sentence.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return "";
  if (countTokens(text) <= maxTokens) return text;
  // The same pieces as counted: encoding a long run whole would be quadratic in its length.
  const tokens = encodeBounded(text);
  // Decoding a token prefix can end inside a multi-byte character; drop that fragment.
  let prefix = getEncoder()
    .decode(tokens.slice(0, maxTokens))
    .replace(/\uFFFD+$/u, "");
  // Re-tokenizing a prefix can merge differently; shave characters until it really fits (whole
  // ones: a pair's low half shaved alone left a lone surrogate at the end).
  while (prefix.length > 0 && countTokens(prefix) > maxTokens)
    prefix = prefix.slice(0, wholeAt(prefix, prefix.length - 1));
  return prefix;
}

// Loose structural shapes so both wire JSON and the SDK's param types are accepted.
export interface CountableBlock {
  type: string;
}
export interface CountableMessage {
  role: string;
  content: string | ReadonlyArray<CountableBlock>;
}
export interface CountableRequest {
  system?: string | ReadonlyArray<CountableBlock> | null;
  tools?: ReadonlyArray<object> | null;
  messages: ReadonlyArray<CountableMessage>;
}

type LooseBlock = CountableBlock & Record<string, unknown>;

/** Tokens of one tool definition: its JSON without the cache marker (markers are not prompt text). */
export function countToolTokens(tool: object): number {
  const { cache_control: _ignored, ...definition } = tool as Record<string, unknown>;
  return countTokens(JSON.stringify(definition));
}

/** Tokens of one content block (system, message or tool_result content). */
export function countBlockTokens(block: CountableBlock): number {
  const b = block as LooseBlock;
  switch (b.type) {
    case "text":
      return countTokens(String(b.text ?? ""));
    case "thinking":
      return countTokens(String(b.thinking ?? ""));
    case "redacted_thinking":
      return 0;
    case "tool_use":
    case "server_tool_use":
      return countTokens(String(b.name ?? "")) + countTokens(JSON.stringify(b.input ?? {}));
    case "tool_result": {
      const content = b.content;
      if (typeof content === "string") return countTokens(content);
      if (Array.isArray(content)) return content.reduce((sum: number, inner) => sum + countBlockTokens(inner), 0);
      return 0;
    }
    case "image":
      return IMAGE_TOKENS;
    case "document": {
      const source = b.source as { type?: string; data?: unknown } | undefined;
      if (source?.type === "text") return countTokens(String(source.data ?? ""));
      // Binary/URL documents: same flat stand-in as an image (real PDFs cost per page).
      return IMAGE_TOKENS;
    }
    case "web_fetch_tool_result": {
      // A fetched PDF: what the API counts for it (bytes / 4, at most max_content_tokens), not its base64.
      const fetched = b as unknown as ServerToolResultBlock;
      const data = fetchedDocumentData(fetched);
      if (data === null) return countTokens(JSON.stringify(withoutMarker(b)));
      return countTokens(serverResultReadable(fetched)) + fetchedDocumentTokens(data.length);
    }
    default:
      // Unknown block kinds still occupy context; their JSON is a deterministic proxy.
      return countTokens(JSON.stringify(withoutMarker(b)));
  }
}

function withoutMarker(block: LooseBlock): Record<string, unknown> {
  const { cache_control: _ignored, ...rest } = block;
  return rest;
}

/** Tokens of the system prompt, string or text blocks. */
export function countSystemTokens(system: CountableRequest["system"]): number {
  if (system == null) return 0;
  if (typeof system === "string") return countTokens(system);
  return system.reduce((sum, block) => sum + countBlockTokens(block), 0);
}

/** Tokens of one message: overhead plus its blocks. */
export function countMessageTokens(message: CountableMessage): number {
  const content = message.content;
  const body =
    typeof content === "string"
      ? countTokens(content)
      : content.reduce((sum, block) => sum + countBlockTokens(block), 0);
  return MESSAGE_OVERHEAD_TOKENS + body;
}

/**
 * Input tokens of a Messages request:
 *
 *   Σ tools  countTokens(JSON of the definition without cache_control)
 * + system   countTokens(string) or Σ text blocks
 * + Σ messages (MESSAGE_OVERHEAD_TOKENS + Σ blocks)
 *
 * where a block is: text → its text; tool_use → name + JSON(input);
 * tool_result → its string content or Σ its inner blocks; image → IMAGE_TOKENS;
 * web_fetch_tool_result holding a PDF → its JSON without the base64 + the PDF's bytes / 4, at most
 * max_content_tokens (render.ts fetchedDocumentTokens); anything else → JSON of the block.
 */
export function countRequestTokens(request: CountableRequest): number {
  const tools = (request.tools ?? []).reduce((sum, tool) => sum + countToolTokens(tool), 0);
  const messages = request.messages.reduce((sum, message) => sum + countMessageTokens(message), 0);
  return tools + countSystemTokens(request.system) + messages;
}
