// The tool registry: every tool the model can call, its schema, whether it rides every request
// (core) and how it runs. Tools validate their own input and answer errors as tool results, so a
// bad call from the model never breaks a turn.
import type { z } from "zod";
import { describeZodError } from "../../core/validation";
import type { TextView } from "../../services/attachments/formats/format";
import type { RangeReader } from "../../services/attachments/formats/shared/range-reader";
import type { ImageBlock, StoredMessage, TextBlock, ToolSchema } from "../../core/types";
import type { Attachment } from "../../services/attachments/store";
import type { DocKind, SearchHit } from "../../services/cortex/search-index";
import type { EpisodeRow, Note } from "../../services/memory/notes";
import { toolInputSchema } from "./input-schema";

export interface ReadQuery {
  messageId?: string;
  fromSeq?: number;
  toSeq?: number;
  limit: number;
  /**
   * The stored bytes a range read carries at most (TRANSCRIPT_PAGE_BYTES unless given), never fewer
   * than one message: the read crosses RPC from another conversation's object, capped at 32 MiB.
   */
  maxBytes?: number;
}

// What a running tool may touch: only the caller's tenant, through these functions. The context
// comes in slices, one per kind of access; each tool's definition names the slices it uses
// (ToolDefinition's second parameter), and the conversation's Durable Object builds one
// ToolContext holding them all (durable-objects/conversation/tool-context.ts).

/** Who is calling, from where: every tool may read it. */
export interface CallScope {
  tenantId: string;
  conversationId: string;
  /** The running turn and the tool_use id of this call (an HTTP tool sends them to its endpoint). */
  turnId?: string;
  callId?: string;
  /** Narration of long work, shown to the user while the tool runs. */
  progress(message: string): void;
}

/** Stored messages as read back; `supersededBy` marks one a regenerate replaced (the message that did). */
export interface ReadMessages {
  messages: (StoredMessage & { supersededBy?: string })[];
  messageCount: number;
  /** Where a range read stopped before its toSeq (its byte bound reached): the fromSeq that reads on. */
  next?: number;
}

/** This tenant's conversations: their messages and the list of them. */
export interface TranscriptAccess {
  /** Messages of any conversation of this tenant; null when it does not exist for this tenant. */
  readConversation(conversationId: string, query: ReadQuery): Promise<ReadMessages | null>;
  listConversations(
    limit: number,
    before?: string,
  ): Promise<{ id: string; title: string; createdAt: string; updatedAt: string; messageCount: number }[]>;
}

/** The cortex, scoped to this tenant. */
export interface CortexAccess {
  search(
    query: string,
    limit: number,
    opts?: { kinds?: DocKind[]; refPrefix?: string; said?: "user" | "assistant" },
  ): Promise<SearchHit[]>;
}

/** This tenant's attachments, and a PDF's page index in the cortex. */
export interface AttachmentAccess {
  /** One of this tenant's attachments with a ranged reader over its bytes; null when unknown. */
  openAttachment(
    id: string,
  ): Promise<{ attachment: Attachment; reader: RangeReader; text(): Promise<TextView> } | null>;
  /** How far a PDF's page index is, and starting it (chunks through the job queue). */
  pageIndex: {
    status(attachmentId: string): Promise<{ status: string; indexed: number; startedAt: string | null }>;
    start(attachmentId: string, pageCount: number): Promise<void>;
    /** Indexes pages read here (a password-protected PDF); how many of its pages are indexed, null when it is gone. */
    put(attachmentId: string, pages: readonly { page: number; text: string }[]): Promise<number | null>;
  };
}

/** The tenant's memory; every lookup is scoped to this tenant. */
export interface MemoryAccess {
  memory: {
    getNote(id: string): Promise<Note | null>;
    getEpisode(id: string): Promise<EpisodeRow | null>;
    conversationOfMessage(messageId: string): Promise<string | null>;
    saveNote(input: { title?: string; text: string; tags?: string[] }): Promise<Note>;
    updateNote(id: string, change: { title?: string; text?: string; tags?: string[] }): Promise<Note | null>;
    deleteNote(id: string): Promise<boolean>;
  };
}

/** The conversation's tools: which non-core ones are on, turning one on, and the registry of the call. */
export interface ToolAccess {
  /** Non-core tools this conversation has activated (their schemas ride its requests). */
  activeTools: readonly string[];
  /** Adds a tool to the conversation for this and later turns. */
  activateTool(name: string): Promise<void>;
  /**
   * The registry running this call: the built-in tools plus this turn's tenant tools, so
   * tool_search and tool_activate see exactly what the turn can run. Set by `ToolRegistry.run`.
   */
  tools?: ToolRegistry;
}

/** Workflow mode's sub-agents. */
export interface DelegateAccess {
  /** Runs a sub-agent on a task; set only in the master's turn (a sub-agent cannot delegate). */
  delegate?(task: string, name: string): Promise<ToolOutput>;
}

/** Every slice: what the registry hands each call (a tool sees the slices it names). */
export interface ToolContext
  extends CallScope,
    TranscriptAccess,
    CortexAccess,
    AttachmentAccess,
    MemoryAccess,
    ToolAccess,
    DelegateAccess {}

export interface ToolOutput {
  content: string;
  isError?: boolean;
  /** Rich results (an image the model asked to look at); `content` still describes them. */
  blocks?: Array<TextBlock | ImageBlock>;
}

/**
 * A tool: `I` is its validated input, `C` the slices of ToolContext its `run` uses (the registry
 * hands it the whole context; naming the slices keeps each tool to what it needs).
 */
export interface ToolDefinition<I = unknown, C = ToolContext> {
  name: string;
  description: string;
  /** One line for the system prompt's <capabilities> index. */
  capability: string;
  /** Core tools ride every request; the others are found with tool_search and added with tool_activate. */
  core: boolean;
  /** Validates calls, and is the source of the JSON Schema the model sees (input-schema.ts). */
  input: z.ZodType<I>;
  /**
   * Input fields that are secrets (a PDF's password): the call runs with them, but the stored
   * tool_use block, turn events and everything built from them carry "[<field> withheld]", and
   * the result never repeats them.
   */
  secretInputs?: readonly string[];
  /**
   * The JSON Schema the model sees when it is not derived from `input`: a tenant's tool states its
   * own schema (and `input` then only checks that the call is an object).
   */
  jsonSchema?: Record<string, unknown>;
  /**
   * Tools of one family (an MCP server's) share one line in the <capabilities> index, this
   * group's, instead of a line each (capability-index.ts); `shortName` is how that line names it.
   */
  indexGroup?: string;
  shortName?: string;
  /**
   * "client": the caller's code runs it (agent/tools/client-tool.ts). The turn loop never calls
   * `run`; it pauses the turn and waits for the client's result.
   */
  runsOn?: "client";
  run(input: I, ctx: C): Promise<ToolOutput>;
}

/** A tool's line in the <capabilities> index. */
export const capabilityLine = (t: ToolDefinition<unknown>): string =>
  t.core ? t.capability : `${t.capability} (tool_activate first)`;

/** What a withheld secret input reads as in the transcript. */
export const withheldText = (field: string) => `[${field} withheld]`;

/** The tenant's tools as they are now, read again past any cache (durable-objects/conversation/turn-tools.ts). */
export type ToolReread = () => Promise<readonly ToolDefinition<unknown>[]>;

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition<unknown>>();
  private readonly schemas = new Map<string, Record<string, unknown>>();
  /** A turn's one re-read of the tenant's tools (`withReread`), shared by the copies made of its registry. */
  private reread: { load: ToolReread; fresh?: Promise<readonly ToolDefinition<unknown>[]> } | null = null;

  register<I>(tool: ToolDefinition<I>): this {
    if (this.tools.has(tool.name)) throw new Error(`tool ${tool.name} registered twice`);
    this.tools.set(tool.name, tool);
    this.schemas.set(tool.name, tool.jsonSchema ?? toolInputSchema(tool.input));
    return this;
  }

  /**
   * This registry plus `extra` tools (a tenant's HTTP and MCP tools, a turn's client tools): a
   * new registry per turn, the built-in one untouched. A name already taken keeps its first tool
   * (built-ins first, then the sources in order) and the later one is left out, logged: a tenant's
   * tool can never stand in for a built-in one, and two tenant tools that collide (a remote MCP
   * server can publish any name) never fail the turn.
   */
  extend(extra: readonly ToolDefinition<unknown>[]): ToolRegistry {
    if (!extra.length) return this;
    const out = this.without([]);
    for (const tool of extra) {
      if (out.tools.has(tool.name)) console.warn(`tool ${tool.name} left out of the turn: the name is taken`);
      else out.register(tool);
    }
    return out;
  }

  /**
   * A copy whose lookups may read the tenant's tools again when they miss (`refreshed`): a turn's
   * registry, built from a list kept for a while, so a tool registered since is still found.
   */
  withReread(load: ToolReread): ToolRegistry {
    const out = this.without([]);
    out.reread = { load };
    return out;
  }

  /**
   * After a lookup missed (a tool_search that matched nothing, a name this registry lacks): the
   * tenant's tools read again, those it lacks joining it (a name already taken keeps its tool, as
   * in `extend`); true when any did. At most one read per turn's registry (its copies share it), so
   * a model searching for nonsense over and over does not read the list on every call.
   */
  async refreshed(): Promise<boolean> {
    if (!this.reread) return false;
    this.reread.fresh ??= this.reread.load().catch((err: unknown) => {
      console.error("tenant tools could not be read again", err);
      return [];
    });
    let added = false;
    for (const tool of await this.reread.fresh)
      if (!this.tools.has(tool.name)) {
        this.register(tool);
        added = true;
      }
    return added;
  }

  /** A copy without the named tools (a paused turn's own client tools win over tenant tools registered while it waited). */
  without(names: readonly string[]): ToolRegistry {
    const out = new ToolRegistry();
    out.reread = this.reread;
    for (const [name, tool] of this.tools) {
      if (names.includes(name)) continue;
      out.tools.set(name, tool);
      out.schemas.set(name, this.schemas.get(name)!);
    }
    return out;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  get(name: string): ToolDefinition<unknown> | undefined {
    return this.tools.get(name);
  }

  all(): ToolDefinition<unknown>[] {
    return [...this.tools.values()].sort((a, b) =>
      a.core === b.core ? a.name.localeCompare(b.name) : a.core ? -1 : 1,
    );
  }

  /**
   * The schemas a request carries: core tools, then the conversation's activated tools, each
   * group in name order, so the prefix is byte-stable until a tool is activated.
   */
  schemasFor(activeTools: readonly string[] = []): ToolSchema[] {
    const active = new Set(activeTools);
    return this.all()
      .filter((t) => t.core || active.has(t.name))
      .map((t) => ({ name: t.name, description: t.description, input_schema: this.schemas.get(t.name)! }));
  }

  /** The <capabilities> index: one line per tool, core ones first. */
  capabilities(): string[] {
    return this.all().map(capabilityLine);
  }

  /** A tool call's input as it may be stored and shown: its secret fields replaced. */
  withhold<T>(name: string, input: T): T {
    const secrets = this.tools.get(name)?.secretInputs;
    if (!secrets?.length || !input || typeof input !== "object" || Array.isArray(input)) return input;
    const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    for (const field of secrets) if (out[field] !== undefined) out[field] = withheldText(field);
    return out as T;
  }

  async run(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const out = await this.runUnscrubbed(name, rawInput, ctx);
    return scrubSecrets(out, this.tools.get(name)?.secretInputs, rawInput);
  }

  /** Why a call cannot run here (an unknown or inactive tool), as the result the model reads; null when it can. */
  refusal(name: string, activeTools: readonly string[]): ToolOutput | null {
    const tool = this.tools.get(name);
    if (!tool) return { content: `unknown tool "${name}"; tool_search finds the available ones`, isError: true };
    if (!tool.core && !activeTools.includes(name))
      return {
        content: `${name} is not active in this conversation; call tool_activate {"name":"${name}"} first`,
        isError: true,
      };
    return null;
  }

  private async runUnscrubbed(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutput> {
    if (!this.tools.has(name)) await this.refreshed();
    const refused = this.refusal(name, ctx.activeTools);
    if (refused) return refused;
    const tool = this.tools.get(name)!;
    const parsed = tool.input.safeParse(rawInput ?? {});
    if (!parsed.success)
      return { content: `invalid input for ${name}: ${describeZodError(parsed.error)}`, isError: true };
    try {
      return await tool.run(parsed.data, { ...ctx, tools: this });
    } catch (err) {
      return { content: `${name} failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
    }
  }
}

/**
 * An error result with every secret input's value replaced, wherever a message (pdf.js's, a
 * parser's) might have quoted it: the result is stored and replayed, the input is not. A result
 * that succeeded is the tools' own text and the document's, which a short password could match by
 * chance ("view" in "overview"), so it is left as it is.
 */
function scrubSecrets(out: ToolOutput, secrets: readonly string[] | undefined, input: unknown): ToolOutput {
  if (!out.isError || !secrets?.length || !input || typeof input !== "object") return out;
  const values = secrets.flatMap((f) => {
    const v = (input as Record<string, unknown>)[f];
    return typeof v === "string" && v.length > 0 ? [[v, withheldText(f)] as const] : [];
  });
  if (!values.length) return out;
  const scrub = (text: string) => values.reduce((t, [v, w]) => t.split(v).join(w), text);
  return {
    ...out,
    content: scrub(out.content),
    ...(out.blocks ? { blocks: out.blocks.map((b) => (b.type === "text" ? { ...b, text: scrub(b.text) } : b)) } : {}),
  };
}
