// Plain data shapes shared by the workers, the Durable Object and the pure lifecycle code.
// Content blocks follow Anthropic's Messages API so stored messages replay without translation.

/** Set only on the copies replay sends; stored messages never carry it. */
export type CacheControl = { cache_control?: { type: "ephemeral" } };

export interface TextBlock extends CacheControl {
  type: "text";
  text: string;
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
export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

export type Role = "user" | "assistant";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
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

/** Exactly what a model call carries (and what the replay endpoint shows). */
export interface ModelRequest {
  model: string;
  max_tokens: number;
  system: SystemBlock[];
  tools: ToolSchema[];
  messages: WireMessage[];
}

export const zeroUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

export function addUsage(a: Usage, b: Partial<Usage> | undefined | null): Usage {
  return {
    input_tokens: a.input_tokens + (b?.input_tokens ?? 0),
    output_tokens: a.output_tokens + (b?.output_tokens ?? 0),
    cache_creation_input_tokens: a.cache_creation_input_tokens + (b?.cache_creation_input_tokens ?? 0),
    cache_read_input_tokens: a.cache_read_input_tokens + (b?.cache_read_input_tokens ?? 0),
  };
}
