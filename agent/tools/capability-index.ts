// The <capabilities> lines of a turn's tenant tools. A tool with an `indexGroup` (every tool of
// one MCP server) does not get a line of its own: its group gets one line naming how many tools
// it has and the first words of their names (their verbs, mostly); tool_search finds each tool.
// A server with 80 tools thus costs the prompt one line, not 80 (the line, like every index line,
// is taken once per UTC day).
import { capabilityLine, type ToolDefinition } from "./registry";

const NAMED = 5;
/** A verb longer than this is cut: a server's names ride every request's system prompt. */
const MAX_VERB = 32;

/** The first word of each tool's name ("get" of get_forecast): what the server's tools do, in a few words. */
function verbs(members: readonly ToolDefinition<unknown>[]): string {
  const words = [
    ...new Set(
      members
        .map((t) =>
          (t.shortName ?? t.name)
            .split(/[_\-.\s/]+/)[0]
            .slice(0, MAX_VERB)
            .toWellFormed(),
        )
        .filter(Boolean),
    ),
  ];
  return `${words.slice(0, NAMED).join(", ")}${words.length > NAMED ? ", …" : ""}`;
}

export function indexLines(tools: readonly ToolDefinition<unknown>[]): string[] {
  const lines: string[] = [];
  const groups = new Map<string, ToolDefinition<unknown>[]>();
  for (const t of tools) {
    if (!t.indexGroup) lines.push(capabilityLine(t));
    else groups.set(t.indexGroup, [...(groups.get(t.indexGroup) ?? []), t]);
  }
  for (const [group, members] of groups)
    lines.push(
      `${group}: ${members.length} tool${members.length === 1 ? "" : "s"} (${verbs(members)}); tool_search finds them`,
    );
  return lines;
}
