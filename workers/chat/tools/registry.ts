// The tool registry: every tool the model can call, its schema, whether it rides every request
// (core) and how it runs. Tools validate their own input and answer errors as tool results, so a
// bad call from the model never breaks a turn.
import { z } from "zod";
import { describeZodError } from "../../../core/validation";
import type { StoredMessage, ToolSchema } from "../../../core/types";
import type { SearchHit } from "../cortex";
import type { EpisodeRow, Note } from "../memory";

export interface ReadQuery {
  messageId?: string;
  fromSeq?: number;
  toSeq?: number;
  limit: number;
}

/** What a running tool may touch: only the caller's tenant, through these functions. */
export interface ToolContext {
  tenantId: string;
  conversationId: string;
  /** Messages of any conversation of this tenant; null when it does not exist for this tenant. */
  readConversation(conversationId: string, query: ReadQuery): Promise<{ messages: StoredMessage[]; messageCount: number } | null>;
  /** The cortex, scoped to this tenant. */
  search(query: string, limit: number): Promise<SearchHit[]>;
  /** The tenant's memory; every lookup is scoped to this tenant. */
  memory: {
    getNote(id: string): Promise<Note | null>;
    getEpisode(id: string): Promise<EpisodeRow | null>;
    conversationOfMessage(messageId: string): Promise<string | null>;
    saveNote(input: { title?: string; text: string; tags?: string[] }): Promise<Note>;
  };
}

export interface ToolOutput {
  content: string;
  isError?: boolean;
}

export interface ToolDefinition<I = unknown> {
  name: string;
  description: string;
  /** Core tools ride every request; the others are found with tool_search (a later issue). */
  core: boolean;
  input: z.ZodType<I>;
  inputSchema: Record<string, unknown>;
  run(input: I, ctx: ToolContext): Promise<ToolOutput>;
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition<any>>();

  register<I>(tool: ToolDefinition<I>): this {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} registered twice`);
    this.tools.set(tool.name, tool);
    return this;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Schemas sent with every request, in a fixed order so the prefix stays byte-stable. */
  coreSchemas(): ToolSchema[] {
    return [...this.tools.values()]
      .filter((t) => t.core)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  }

  async run(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const tool = this.tools.get(name);
    if (!tool) return { content: `unknown tool "${name}"; available: ${this.names().join(", ")}`, isError: true };
    const parsed = tool.input.safeParse(rawInput ?? {});
    if (!parsed.success) return { content: `invalid input for ${name}: ${describeZodError(parsed.error)}`, isError: true };
    try {
      return await tool.run(parsed.data, ctx);
    } catch (err) {
      return { content: `${name} failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
  }
}
