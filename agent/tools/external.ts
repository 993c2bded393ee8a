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

const sources: ToolSource[] = [];

/** Adds a kind of tenant tool; each kind's module calls this once. */
export function addToolSource(source: ToolSource): void {
  if (!sources.some((s) => s.kind === source.kind)) sources.push(source);
}

/** Every tenant tool the turn may use, in a stable order (kind, then name). */
export async function tenantTools(scope: ToolScope): Promise<ToolDefinition<unknown>[]> {
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
