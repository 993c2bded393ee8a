// Plain data shapes shared by the workers, the Durable Object and the pure lifecycle code.
// Content blocks follow Anthropic's Messages API so stored messages replay without translation.

/** Set only on the copies replay sends; stored messages never carry it. */
export type CacheControl = { cache_control?: { type: "ephemeral" } };

export interface TextBlock extends CacheControl {
  type: "text";
  text: string;
  /**
   * Where the model's text cites a server tool's result (web search, web fetch), kept exactly as the
   * model sent them: the next request must carry them back unchanged.
   */
  citations?: readonly Record<string, unknown>[] | null;
}
export interface ImageBlock extends CacheControl {
  type: "image";
  source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
}
export interface ToolUseBlock extends CacheControl {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export interface ToolResultBlock extends CacheControl {
  type: "tool_result";
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}
/**
 * The model's reasoning, stored exactly as received (signature included): within a turn's tool loop
 * the next request must carry it back unchanged. `thinking` is "" when the display is "omitted".
 */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}
/** Reasoning the API returned encrypted; stored and sent back exactly as received. */
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}
/** A call of a server tool (web search, web fetch): run by the API, never by the platform. */
export interface ServerToolUseBlock {
  type: "server_tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
  caller?: unknown;
}
export const SERVER_TOOL_RESULT_TYPES = [
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
] as const;
/**
 * A server tool's result, as the API returned it. Its content (encrypted search results, fetched
 * documents) may not be altered: it is replayed byte for byte or not at all.
 */
export interface ServerToolResultBlock {
  type: (typeof SERVER_TOOL_RESULT_TYPES)[number];
  tool_use_id: string;
  content: unknown;
  caller?: unknown;
}
export type ContentBlock =
  | TextBlock
  | ImageBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ServerToolUseBlock
  | ServerToolResultBlock;

export const isThinkingBlock = (b: ContentBlock): b is ThinkingBlock | RedactedThinkingBlock =>
  b.type === "thinking" || b.type === "redacted_thinking";
export const isServerToolResult = (b: ContentBlock): b is ServerToolResultBlock =>
  (SERVER_TOOL_RESULT_TYPES as readonly string[]).includes(b.type);

export type Role = "user" | "assistant";

export interface Usage {
  input_tokens: number;
  /** Everything the model wrote, thinking included (what output is billed on). */
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The part of output_tokens spent thinking (0 when the provider does not say). */
  thinking_tokens?: number;
  /** Server tool calls the API ran and bills per call. */
  web_search_requests?: number;
  web_fetch_requests?: number;
  /** What it cost in USD at the catalog's prices (core/pricing.ts); absent when the model is not priced. */
  cost_usd?: number;
}

export interface StoredMessage {
  id: string;
  seq: number;
  role: Role;
  content: ContentBlock[];
  createdAt: string;
  /** Set on assistant messages: what the model call that produced it reported. */
  usage?: Usage;
  model?: string;
  stopReason?: string | null;
  /**
   * Set on an assistant message with thinking: per thinking block (in order), a fingerprint of the
   * request prefix it was produced after. A block goes back to the model only while its prefix is
   * unchanged (core/thinking-guard.ts).
   */
  thinkingPrefixes?: string[];
  /**
   * Set on an assistant message with thinking produced under thinking type `between_tools`: the
   * effort it ran at. The API takes no other effort for the conversation's between_tools requests
   * while such blocks go back (durable-objects/conversation/conversation-patch.ts).
   */
  betweenToolsEffort?: string;
  /**
   * Set on the messages of a delegated sub-agent's run (workflow mode): the sub-agent's own
   * thread, kept in the transcript and the index, never replayed to the master, which sees only
   * the run's result in its tool_result.
   */
  agent?: AgentTag;
}

export interface AgentTag {
  /** The segment: one per delegated run, shared by all its messages. */
  segment: string;
  /** The name the master gave the sub-agent. */
  name: string;
  /** The master's agent_delegate call this run answers. */
  toolUseId: string;
}

/** A sub-agent's message: part of the record, never part of the master's replay. */
export const isAgentSegment = (m: Pick<StoredMessage, "agent">): boolean => m.agent !== undefined;

/** A message before the Durable Object has given it an id and a seq. */
export type NewMessage = Omit<StoredMessage, "id" | "seq" | "createdAt">;

export interface WireMessage {
  role: Role;
  content: ContentBlock[] | string;
}

export interface ToolSchema {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: { type: "ephemeral" };
}

export type SystemBlock = { type: "text"; text: string; cache_control?: { type: "ephemeral" } };

/** A server tool the API runs itself (web search, web fetch), offered by its versioned type. */
export interface ServerToolSpec {
  type: string;
  name: string;
  max_uses?: number;
  [param: string]: unknown;
}

/** `thinking` as the Messages API takes it; absent, the model's default applies. */
export type ThinkingConfig =
  | { type: "adaptive"; display?: "summarized" | "omitted" }
  | { type: "enabled"; budget_tokens: number; display?: "summarized" | "omitted" }
  | { type: "disabled" }
  | { type: "between_tools" };

/** Exactly what a model call carries (and what the replay endpoint shows). */
export interface ModelRequest {
  model: string;
  max_tokens: number;
  system: SystemBlock[];
  tools: Array<ToolSchema | ServerToolSpec>;
  messages: WireMessage[];
  thinking?: ThinkingConfig;
  output_config?: { effort: string };
}

export const zeroUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

export function addUsage(a: Usage, b: Partial<Usage> | undefined | null): Usage {
  const sum: Usage = {
    input_tokens: a.input_tokens + (b?.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b?.output_tokens ?? 0),
    cache_creation_input_tokens: a.cache_creation_input_tokens + (b?.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: a.cache_read_input_tokens + (b?.cache_read_input_tokens ?? 0),
  };
  // The optional counters appear once either side has them, so usage without them keeps its shape.
  for (const k of ["thinking_tokens", "web_search_requests", "web_fetch_requests"] as const) {
    if (a[k] !== undefined || b?.[k] !== undefined) sum[k] = (a[k] ?? 0) + (b?.[k] ?? 0);
  }
  if (a.cost_usd !== undefined || b?.cost_usd !== undefined)
    sum.cost_usd = Math.round(((a.cost_usd ?? 0) + (b?.cost_usd ?? 0)) * 1_000_000) / 1_000_000;
  return sum;
}

/** What `total` added to `before` (a resumed turn's usage carries what came before its pause). */
export function usageSince(total: Usage, before: Usage): Usage {
  const out: Usage = {
    input_tokens: total.input_tokens - before.input_tokens,
    output_tokens: total.output_tokens - before.output_tokens,
    cache_creation_input_tokens: total.cache_creation_input_tokens - before.cache_creation_input_tokens,
    cache_read_input_tokens: total.cache_read_input_tokens - before.cache_read_input_tokens,
  };
  for (const k of ["thinking_tokens", "web_search_requests", "web_fetch_requests"] as const)
    if (total[k] !== undefined) out[k] = total[k]! - (before[k] ?? 0);
  if (total.cost_usd !== undefined)
    out.cost_usd = Math.round((total.cost_usd - (before.cost_usd ?? 0)) * 1_000_000) / 1_000_000;
  return out;
}
