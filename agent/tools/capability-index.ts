// The <capabilities> lines of a turn's tenant tools. A tool with an `indexGroup` (every tool of
// one MCP server) does not get a line of its own: its group gets one line naming how many tools
// it has and a few of them, and tool_search finds each. A server with 80 tools thus costs the
// prompt one line, not 80 (the line, like every index line, is taken once per UTC day).
import { capabilityLine, type ToolDefinition } from "./registry";

const NAMED = 5;

export function indexLines(tools: readonly ToolDefinition<any>[]): string[] {
  const lines: string[] = [];
  const groups = new Map<string, ToolDefinition<any>[]>();
  for (const t of tools) {
    if (!t.indexGroup) lines.push(capabilityLine(t));
    else groups.set(t.indexGroup, [...(groups.get(t.indexGroup) ?? []), t]);
  }
  for (const [group, members] of groups) {
    const shown = members.slice(0, NAMED).map((t) => t.shortName ?? t.name);
    const more = members.length > NAMED ? ", …" : "";
    lines.push(`${group}: ${members.length} tool${members.length === 1 ? "" : "s"} (${shown.join(", ")}${more}); find them with tool_search, then tool_activate`);
  }
  return lines;
}
