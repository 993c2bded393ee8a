// What a provider reply becomes when it is saved: every block the API may need back, exactly as
// it came (thinking with its signature, redacted thinking, server tool calls and their results,
// citations), and the usage fields this platform counts.
import type Anthropic from "@anthropic-ai/sdk";
import { isBlankText } from "../core/blank-text";
import { isUnbilledRefusal, priced } from "../core/pricing";
import type { ModelEntry } from "../core/models/catalog";
import { SERVER_TOOL_RESULT_TYPES, type ContentBlock, type Usage } from "../core/types";

/**
 * The reply's blocks as stored. Text and tool calls keep their fields (an empty `citations` is
 * left out); thinking, server tool calls and server results are kept field for field, as the API
 * requires them back unchanged. A block type this platform does not know is dropped.
 */
export function storedBlocks(blocks: readonly Anthropic.ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case "text":
        out.push({
          type: "text",
          text: b.text,
          ...(b.citations?.length ? { citations: b.citations as unknown as Record<string, unknown>[] } : {}),
        });
        break;
      case "tool_use":
        out.push({ type: "tool_use", id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> });
        break;
      case "thinking":
        out.push({ type: "thinking", thinking: b.thinking, signature: b.signature });
        break;
      case "redacted_thinking":
        out.push({ type: "redacted_thinking", data: b.data });
        break;
      case "server_tool_use":
        out.push({ ...(b as unknown as Extract<ContentBlock, { type: "server_tool_use" }>) });
        break;
      default:
        if ((SERVER_TOOL_RESULT_TYPES as readonly string[]).includes(b.type))
          out.push({
            ...(b as unknown as Extract<ContentBlock, { tool_use_id: string; content: unknown }>),
          } as ContentBlock);
    }
  }
  return out;
}

/** The text blocks of a reply cut off mid-stream: text is all that can be recovered of a partial reply. */
export function partialText(blocks: readonly Anthropic.ContentBlock[] | undefined): ContentBlock[] {
  return (blocks ?? [])
    .filter((b): b is Anthropic.TextBlock => b.type === "text" && !isBlankText(b.text))
    .map((b) => ({ type: "text", text: b.text }));
}

/** Characters per token of the Claude 4 tokenizer on prose, rounded up: an estimate errs low, never billing more than was made. */
const CHARS_PER_TOKEN = 4;

/**
 * The usage of a stream that ended before its message_delta (stopped by the user, or an error
 * mid-stream): the API reports output tokens only in that event, so the opening count (1) would
 * bill none of what was generated. The streamed blocks are estimated instead (their characters at
 * CHARS_PER_TOKEN, times the model's tokenizer ratio; no tokenizer table rides the worker), never
 * less than what was reported. Web searches and fetches likewise: the finished ones among the
 * streamed blocks, never fewer than reported.
 */
export function partialUsage(partial: Anthropic.Message, model: Pick<ModelEntry, "tokenizerRatio">): Usage {
  const usage = pickUsage(partial.usage);
  const chars = partial.content.reduce((n, b) => n + streamedChars(b), 0);
  const streamed = Math.ceil((chars / CHARS_PER_TOKEN) * model.tokenizerRatio);
  if (streamed > usage.output_tokens) usage.output_tokens = streamed;
  // The server tool calls are counted in message_delta too (message_start says 0): a finished
  // search or fetch whose result block arrived is billed, so it is counted from the blocks.
  const done = finishedServerCalls(partial.content);
  if (done.web_search_requests > (usage.web_search_requests ?? 0)) usage.web_search_requests = done.web_search_requests;
  if (done.web_fetch_requests > (usage.web_fetch_requests ?? 0)) usage.web_fetch_requests = done.web_fetch_requests;
  return usage;
}

/** The searches and fetches whose result blocks came back as results (an error result is not billed). */
function finishedServerCalls(blocks: readonly Anthropic.ContentBlock[]) {
  let web_search_requests = 0;
  let web_fetch_requests = 0;
  for (const b of blocks as readonly { type: string; content?: unknown }[]) {
    if (b.type === "web_search_tool_result" && Array.isArray(b.content)) web_search_requests++;
    if (b.type === "web_fetch_tool_result" && (b.content as { type?: string } | undefined)?.type === "web_fetch_result")
      web_fetch_requests++;
  }
  return { web_search_requests, web_fetch_requests };
}

function streamedChars(b: Anthropic.ContentBlock): number {
  if (b.type === "text") return b.text.length;
  if (b.type === "thinking") return b.thinking.length;
  if (b.type === "tool_use" || b.type === "server_tool_use")
    return b.name.length + JSON.stringify(b.input ?? {}).length;
  return 0;
}

/**
 * A reply's usage priced at `entry` (the model that answered), the one pricing every model call
 * goes through: a refusal before any output, in a category the API does not bill, costs nothing.
 */
export function billedUsage(
  reply: Pick<Anthropic.Message, "usage" | "stop_reason" | "content" | "stop_details">,
  entry: Pick<ModelEntry, "prices"> | null,
): Usage {
  const usage = pickUsage(reply.usage);
  return isUnbilledRefusal(reply) ? { ...usage, cost_usd: 0 } : priced(usage, entry);
}

export function pickUsage(u: Anthropic.Usage): Usage {
  const usage: Usage = {
    input_tokens: u.input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
  };
  const thinking = u.output_tokens_details?.thinking_tokens;
  if (thinking) usage.thinking_tokens = thinking;
  if (u.server_tool_use?.web_search_requests) usage.web_search_requests = u.server_tool_use.web_search_requests;
  if (u.server_tool_use?.web_fetch_requests) usage.web_fetch_requests = u.server_tool_use.web_fetch_requests;
  return usage;
}
