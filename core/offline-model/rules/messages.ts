/**
 * Message and content rules: non-empty lists, content and text; where documents and citations may
 * appear; prefill and its trailing whitespace.
 */
import { invalid } from "../errors";
import type { WireBlock } from "../wire";
import { blocksOf, eachBlock, mergedTurns, nestedBlocks, type Rule, systemBlocks, textOfBlock } from "./context";

/** Source: https://platform.claude.com/docs/en/api/messages (messages is required, at least one). Wording from the API. */
export const messagesNotEmpty: Rule = ({ request }) => {
  if (request.messages.length === 0) throw invalid("messages: at least one message is required");
};

/** Source: https://platform.claude.com/docs/en/api/messages ("a limit of 100,000 messages in a single request"). Wording ours. */
export const messagesLimit: Rule = ({ request }) => {
  if (request.messages.length > 100_000)
    throw invalid(`messages: A maximum of 100000 messages may be provided. Found ${request.messages.length}.`);
};

/**
 * Every message has content, except an optional final assistant message. Source:
 * https://platform.claude.com/docs/en/api/messages (wording from the API, anthropics/claude-code#6774).
 */
export const contentNotEmpty: Rule = ({ request }) => {
  const last = request.messages.length - 1;
  for (const [i, message] of request.messages.entries()) {
    if (
      Array.isArray(message.content) &&
      message.content.length === 0 &&
      !(i === last && message.role === "assistant")
    ) {
      throw invalid(
        `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
  }
};

/**
 * The blocks a block holds besides a tool_result's: a search_result's text blocks and the text and
 * image blocks of a document whose source is a content list, with their paths.
 */
function* heldBlocks({
  block,
  path,
}: {
  block: WireBlock;
  path: string;
}): Generator<{ block: WireBlock; path: string }> {
  const source = block.source as { type?: unknown; content?: unknown } | null | undefined;
  const [list, at] =
    block.type === "search_result"
      ? [block.content, `${path}.search_result.content`]
      : block.type === "document" && source?.type === "content"
        ? [source.content, `${path}.document.source.content.content`]
        : [undefined, ""];
  if (!Array.isArray(list)) return;
  for (const [k, inner] of (list as WireBlock[]).entries())
    if (inner !== null && typeof inner === "object") yield { block: inner, path: `${at}.${k}` };
}

/** Every message block with its path: top level, in tool results, and held by either (heldBlocks). */
function* messageBlocks(request: Parameters<Rule>[0]["request"]): Generator<{ block: WireBlock; path: string }> {
  for (const at of eachBlock(request))
    for (const outer of [{ block: at.block, path: at.path }, ...nestedBlocks(at)]) {
      yield outer;
      yield* heldBlocks(outer);
    }
}

const textBlocksWithPaths = function* (request: Parameters<Rule>[0]["request"]) {
  for (const { block, path } of messageBlocks(request)) yield { block, path, area: "messages" };
  for (const { block, path } of systemBlocks(request)) if (path !== "system") yield { block, path, area: "system" };
};

/**
 * An empty text block cannot carry cache_control. Source:
 * https://platform.claude.com/docs/en/build-with-claude/prompt-caching ("Empty text blocks cannot be
 * cached"); wording from the API (anthropics/claude-code#55302).
 */
export const cacheControlOnEmptyText: Rule = ({ request }) => {
  for (const { block, path } of textBlocksWithPaths(request)) {
    if (block.type === "text" && textOfBlock(block) === "" && block.cache_control)
      throw invalid(`${path}.text: cache_control cannot be set for empty text blocks`);
  }
};

/**
 * Text blocks in messages and system are non-empty and not only whitespace. Source:
 * https://platform.claude.com/docs/en/api/messages (content blocks); wording from the API
 * (anthropics/claude-code#23440, agentjido/req_llm#711).
 */
export const textNotEmpty: Rule = ({ request }) => {
  // A tool result's own text blocks too (anthropics/anthropic-sdk-go#377: a tool_result holding
  // `{"type":"text","text":""}` is a 400), a search_result's text blocks ("text: the actual text
  // content (non-empty string)", https://platform.claude.com/docs/en/build-with-claude/search-results)
  // and a content document's (the same TextBlockParam as at the top level, SDK ContentBlockSourceContent).
  for (const { block } of messageBlocks(request)) {
    if (block.type !== "text") continue;
    if (textOfBlock(block) === "") throw invalid("messages: text content blocks must be non-empty");
    if (textOfBlock(block).trim() === "")
      throw invalid("messages: text content blocks must contain non-whitespace text");
  }
  for (const { block, path } of systemBlocks(request)) {
    const text = textOfBlock(block);
    if (path === "system" && text === "") continue; // an empty system string is no system prompt
    if (text === "") throw invalid("system: text content blocks must be non-empty");
    if (text.trim() === "") throw invalid("system: text content blocks must contain non-whitespace text");
  }
};

const hasCitations = (block: WireBlock) => Array.isArray(block.citations) && block.citations.length > 0;

/**
 * A user text block with a non-empty `citations` array, directly or inside a search_result, is a 400
 * under API version 2026-10-21. Source: https://platform.claude.com/docs/en/api/versioning. Wording ours.
 */
export const noCitationsInUser: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.message.role !== "user") continue;
    const inner = [{ block: at.block, path: at.path }, ...nestedBlocks(at)];
    for (const { block, path } of inner) {
      if (block.type === "text" && hasCitations(block))
        throw invalid(`${path}.text.citations: citations are not supported in user messages`);
      if (block.type === "search_result" && Array.isArray(block.content)) {
        for (const [k, text] of (block.content as WireBlock[]).entries()) {
          if (hasCitations(text))
            throw invalid(`${path}.search_result.content.${k}.citations: citations are not supported in user messages`);
        }
      }
    }
  }
};

/** Input-only blocks the API refuses directly in an assistant message (the user sends them). */
const USER_INPUT_ONLY = new Set(["image", "search_result"]);

/**
 * A document block placed directly in an assistant message is a 400 under API version 2026-10-21
 * (documents nested in server tool results stay valid). Source:
 * https://platform.claude.com/docs/en/api/migration-2026-10-21. Wording ours.
 * An image or search_result block there is a 400 too. Source: epam/ai-dial-adapter-bedrock#306
 * (wording from the API as reported: "messages.1.content: 'image' blocks are not permitted within
 * assistant turns."; the same form for search_result).
 */
export const noDocumentInAssistant: Rule = ({ request }) => {
  for (const at of eachBlock(request)) {
    if (at.message.role !== "assistant") continue;
    if (at.block.type === "document")
      throw invalid(`${at.path}: document blocks are not supported in assistant messages`);
    if (USER_INPUT_ONLY.has(at.block.type))
      throw invalid(`messages.${at.i}.content: '${at.block.type}' blocks are not permitted within assistant turns.`);
  }
};

/** The last turn after merging, and whether it resumes a paused server-tool turn. */
function finalAssistant(request: Parameters<Rule>[0]["request"]) {
  const turns = mergedTurns(request);
  const last = turns[turns.length - 1];
  if (last?.role !== "assistant") return null;
  return { turn: last, resumesPause: last.blocks.some((at) => at.block.type === "server_tool_use") };
}

/**
 * A final assistant message (prefill) on models that refuse it. Resending a `pause_turn` reply as
 * the last message (it holds a server_tool_use) is a continuation, not a prefill. Sources:
 * https://platform.claude.com/docs/en/api/errors#prefill-not-supported,
 * https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons (pause_turn: send the reply back as-is).
 */
export const prefill: Rule = ({ request, model, endpoint }) => {
  if (endpoint !== "messages" || model.prefill) return;
  const final = finalAssistant(request);
  if (final && !final.resumesPause)
    throw invalid(
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    );
};

/**
 * JSON outputs (`output_config.format`) take no prefill, on any model: "Message Prefilling:
 * Incompatible with JSON outputs". A final `pause_turn` reply resent is a continuation, as above.
 * Source: https://platform.claude.com/docs/en/build-with-claude/structured-outputs ("Feature
 * compatibility"); wording from the API as reported (mastra-ai/mastra#12800).
 */
export const prefillWithJsonOutputs: Rule = ({ body, request, endpoint }) => {
  if (endpoint !== "messages") return;
  const format = (body.output_config as { format?: unknown } | null | undefined)?.format;
  if (format === undefined || format === null) return;
  const final = finalAssistant(request);
  if (final && !final.resumesPause)
    throw invalid(
      "Your API request included an `assistant` message in the final position, which would pre-fill the `assistant` response. When using output format, pre-filling the `assistant` response is not supported.",
    );
};

/**
 * On models that accept prefill, the final assistant content cannot end in whitespace. Source:
 * https://platform.claude.com/docs/en/build-with-claude/prompt-engineering/prefill-claudes-response
 * (wording from the API, tailcallhq/forgecode#1872).
 */
export const prefillTrailingWhitespace: Rule = ({ request, model, endpoint }) => {
  if (endpoint !== "messages" || !model.prefill) return;
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== "assistant") return;
  const blocks = blocksOf(last);
  const tail = blocks[blocks.length - 1];
  if (tail?.type === "text" && /\s$/.test(textOfBlock(tail)))
    throw invalid("messages: final assistant content cannot end with trailing whitespace");
};

/**
 * With manual thinking (`enabled`), the assistant turn that a tool loop continues starts with a
 * thinking block; adaptive thinking lifts this. Source:
 * https://platform.claude.com/docs/en/build-with-claude/thinking-steering-and-cost (turn validation).
 * Wording as reported from the API.
 */
export const manualThinkingFirst: Rule = ({ body, request, endpoint }) => {
  const thinking = body.thinking as { type?: unknown } | undefined;
  if (thinking?.type !== "enabled") return;
  const turns = mergedTurns(request);
  const last = turns[turns.length - 1];
  const previous = turns[turns.length - 2];
  // A prefill (the final message the assistant's) is held to the same rule: it must open with
  // thinking, which a written prefill cannot. Source:
  // https://platform.claude.com/docs/en/build-with-claude/prompt-engineering/prefill-claudes-response
  // ("not currently supported with extended thinking"); the models/sonnet-5-5 migration guide (Haiku 4.5).
  const final = endpoint === "messages" ? finalAssistant(request) : null;
  const opening =
    final && !final.resumesPause
      ? final.turn
      : last?.role === "user" &&
          previous?.role === "assistant" &&
          last.blocks.some((at) => at.block.type === "tool_result")
        ? previous
        : null;
  if (!opening) return;
  const first = opening.blocks[0];
  if (first && first.block.type !== "thinking" && first.block.type !== "redacted_thinking") {
    throw invalid(
      `${first.path}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.block.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block. To avoid this requirement, disable \`thinking\`.`,
    );
  }
};
