// A tenant's own tools (HTTP endpoints, remote MCP servers, registered client tools) join the
// built-in ones per turn. Each kind is one source; a source that fails is left out of that turn
// (its tools answer "unknown tool" and tool_search does not list them) rather than failing it.
import type { ToolDefinition } from "./registry";

/** Whose tools a turn may see: the conversation's tenant, and its project when it has one. */
export interface ToolScope {
  env: Env;
  tenantId: string;
  projectId: string | null;
  conversationId: string;
}

export interface ToolSource {
  /** Names the kind in logs. */
  kind: string;
  load(scope: ToolScope): Promise<ToolDefinition<unknown>[]>;
}

/**
 * Every tenant tool the turn may use from `sources` (the list is agent/tools/index.ts's
 * tenantToolSources), in a stable order (source, then name).
 */
export async function tenantTools(
  scope: ToolScope,
  sources: readonly ToolSource[],
): Promise<ToolDefinition<unknown>[]> {
  const loaded = await Promise.all(
    sources.map(async (s) => {
      try {
        return (await s.load(scope)).sort((a, b) => a.name.localeCompare(b.name));
      } catch (err) {
        console.error(`tenant tools unavailable: ${s.kind}`, err);
        return [];
      }
    }),
  );
  return loaded.flat();
}
