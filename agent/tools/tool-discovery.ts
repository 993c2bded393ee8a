// tool_search and tool_activate: only core tool schemas ride every request; the model finds the
// others by searching the registry and adds one to the conversation (remembered across turns).
// A search that matches nothing, or a name the turn's registry lacks, reads the tenant's tools
// again once in the turn (ToolRegistry.refreshed): a tool registered a moment ago is found.
// Nothing is activated because a keyword appeared in the conversation.
import { z } from "zod";
import type { ToolAccess, ToolDefinition, ToolRegistry } from "./registry";

// One stem per word family: "quote", "quotes", "quoted" and "quoting" all become "quot".
const words = (text: string) =>
  new Set((text.toLowerCase().match(/[a-z0-9]+/g) ?? []).map((w) => w.replace(/(?<=...)(?:ing|ed|es|e|s)$/, "")));

/**
 * Everyday verbs for the actions tools are named by (create_…, get_…, update_…): a person asks to
 * "find" or "show" what a tool calls search or get. Each query word also matches its family's verb.
 */
const VERB_FAMILIES: readonly (readonly string[])[] = [
  ["search", "find", "lookup", "look", "query"],
  ["get", "show", "fetch", "read", "view", "open", "retrieve"],
  ["update", "change", "edit", "modify", "rename", "set"],
  ["create", "add", "make", "new", "start", "open"],
  ["delete", "remove", "erase", "drop", "discard"],
  ["list", "browse", "enumerate"],
];
const synonyms = new Map<string, Set<string>>();
for (const family of VERB_FAMILIES) {
  const stems = [...family].map((w) => [...words(w)][0]);
  for (const stem of stems) synonyms.set(stem, new Set([...(synonyms.get(stem) ?? []), ...stems]));
}

/** The query's words, each with its verb family's other members. */
const queryWords = (query: string) => new Set([...words(query)].flatMap((w) => [w, ...(synonyms.get(w) ?? [])]));

/** How long a miss's list of what is available may grow: a tenant's 50 MCP servers of 500 tools each would be 600,000+ characters by name. */
const MISS_LIST_CHARS = 2_000;

/**
 * What a search that matched nothing offers instead: each tool by name, a family of tools (an MCP
 * server's) as one entry with its count, cut at MISS_LIST_CHARS with how many entries were left out.
 */
function availableList(all: readonly ToolDefinition<unknown>[]): string {
  const families = new Map<string, number>();
  const entries: string[] = [];
  for (const t of all) {
    if (!t.indexGroup) entries.push(t.name);
    else families.set(t.indexGroup, (families.get(t.indexGroup) ?? 0) + 1);
  }
  for (const [group, count] of families) entries.push(`${group}: ${count} tool${count === 1 ? "" : "s"}`);
  let listed = "";
  let shown = 0;
  for (const entry of entries) {
    const next = shown ? `${listed}, ${entry}` : entry;
    if (next.length > MISS_LIST_CHARS) break;
    listed = next;
    shown++;
  }
  return shown < entries.length
    ? `${listed}, and ${entries.length - shown} more (search by what the tool does)`
    : listed;
}

/** The tools that best match `query`, at most 8, best first. */
function bestMatches(tools: ToolRegistry, query: string): { t: ToolDefinition<unknown>; score: number }[] {
  const q = queryWords(query);
  return tools
    .all()
    .map((t) => {
      const name = words(t.name.replace(/_/g, " "));
      const text = words(`${t.description} ${t.capability}`);
      let score = 0;
      for (const w of q) score += (name.has(w) ? 3 : 0) + (text.has(w) ? 1 : 0);
      return { t, score };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.t.name.localeCompare(b.t.name))
    .slice(0, 8);
}

export function toolSearch(registry: ToolRegistry): ToolDefinition<{ query: string }, ToolAccess> {
  return {
    name: "tool_search",
    core: true,
    capability: "tool_search: find more tools by what you need to do",
    description:
      "Search the tools that are not loaded yet by what you need to do. Returns matching tools with a one-line description; add one with tool_activate.",
    input: z.strictObject({ query: z.string().trim().min(1).max(200) }),
    async run({ query }, ctx) {
      const tools = ctx.tools ?? registry;
      let scored = bestMatches(tools, query);
      // Nothing matched: the turn's list may predate a tool just registered (ToolRegistry.refreshed).
      if (!scored.length && (await tools.refreshed())) scored = bestMatches(tools, query);
      if (!scored.length) return { content: `no tool matches "${query}"; available: ${availableList(tools.all())}` };
      return {
        content: scored
          .map(({ t }) => {
            const state = t.core
              ? "ready"
              : ctx.activeTools.includes(t.name)
                ? "active"
                : `inactive: tool_activate {"name":"${t.name}"}`;
            return `- ${t.name} (${state}): ${t.description}`;
          })
          .join("\n"),
      };
    },
  };
}

export function toolActivate(registry: ToolRegistry): ToolDefinition<{ name: string }, ToolAccess> {
  return {
    name: "tool_activate",
    core: true,
    capability: "tool_activate: add a found tool to this conversation",
    description:
      "Add a tool found with tool_search to this conversation. Its schema is available from your next step on and stays for later turns.",
    input: z.strictObject({ name: z.string().trim().min(1).max(64) }),
    async run({ name }, ctx) {
      const tools = ctx.tools ?? registry;
      // A name the turn's list lacks may be a tool just registered (ToolRegistry.refreshed).
      const tool = tools.get(name) ?? ((await tools.refreshed()) ? tools.get(name) : undefined);
      if (!tool) return { content: `no tool named "${name}"; tool_search finds the available ones`, isError: true };
      if (tool.core) return { content: `${name} is a core tool: it is always available` };
      if (ctx.activeTools.includes(name)) return { content: `${name} is already active` };
      await ctx.activateTool(name);
      return { content: `${name} is active in this conversation from your next step on` };
    },
  };
}
