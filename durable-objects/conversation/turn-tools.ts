// The tools a turn runs with: the built-in registry plus the tenant's own tools (agent/tools/
// external.ts). The live list is re-read at most every TENANT_TOOLS_TTL_MS, so a registered or
// removed tool is seen within that bound; and a turn's lookup that misses (a tool_search matching
// nothing, tool_activate or a call naming a tool the list lacks) re-reads it at once, once per
// turn (ToolRegistry.refreshed), so a tool just registered is found in an open conversation too.
// Its lines in the system prompt's <capabilities> index are taken once per UTC day and kept in the
// object's storage, so registering a tool never changes today's prompt prefix (not even after an
// eviction): it is in the index from the next day on, and tool_search finds it, and tool_activate
// adds it, at once.
import { tenantToolSources, toolRegistry } from "../../agent/tools";
import { tenantTools } from "../../agent/tools/external";
import { indexLines } from "../../agent/tools/capability-index";
import type { ToolDefinition, ToolRegistry } from "../../agent/tools/registry";
import type { ConversationHead } from "../../services/record/conversation-head";
import type { ObjectScope } from "./object-scope";

export const TENANT_TOOLS_TTL_MS = 30_000;
const INDEX_KEY = "tenant-tool-index";

interface DayIndex {
  day: string;
  lines: string[];
}

export class TurnTools {
  private live: { at: number; tools: ToolDefinition<unknown>[] } | null = null;
  private index: DayIndex | null = null;

  constructor(private readonly scope: ObjectScope) {}

  /**
   * The registry of this turn: the built-in tools and the tenant's tools as they are now, which a
   * lookup that misses reads again once (the list it reads is kept for the next turns too).
   */
  async registry(head: ConversationHead): Promise<ToolRegistry> {
    const live = this.live && Date.now() - this.live.at < TENANT_TOOLS_TTL_MS ? this.live.tools : await this.read(head);
    return toolRegistry.extend(live).withReread(() => this.read(head));
  }

  /** The tenant's tools read now, kept as the live list. */
  private async read(head: ConversationHead): Promise<ToolDefinition<unknown>[]> {
    const tools = await tenantTools(
      { env: this.scope.env, tenantId: head.tenantId, projectId: head.projectId, conversationId: head.id },
      tenantToolSources,
    );
    this.live = { at: Date.now(), tools };
    return tools;
  }

  /** The tenant tools' index lines for `day`'s system prompt: the day's first list, kept for the day. */
  async indexLines(registry: ToolRegistry, day: string): Promise<string[]> {
    this.index ??= (await this.scope.ctx.storage.get<DayIndex>(INDEX_KEY)) ?? null;
    if (this.index?.day !== day) {
      const builtIn = new Set(toolRegistry.names());
      // Grouped (one line per MCP server, not per tool): see agent/tools/capability-index.ts.
      const lines = indexLines(registry.all().filter((t) => !builtIn.has(t.name)));
      this.index = { day, lines };
      await this.scope.ctx.storage.put(INDEX_KEY, this.index);
    }
    return this.index.lines;
  }

  /** A registration changed under this object (or it is being deleted): re-read the live list. */
  forget(): void {
    this.live = null;
  }
}
