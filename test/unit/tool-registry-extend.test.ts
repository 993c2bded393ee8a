// A turn's registry is the built-in one extended by the tenant's tools: the base stays as it was,
// a built-in name cannot be taken, the stated JSON Schema is what the model sees, and tool_search /
// tool_activate see the extended set (the registry that runs them).
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { toolRegistry } from "../../agent/tools";
import type { ToolContext, ToolDefinition } from "../../agent/tools/registry";

const schema = {
  type: "object",
  properties: { city: { type: "string", description: "a city name" } },
  required: ["city"],
};
const weather: ToolDefinition<Record<string, unknown>> = {
  name: "weather_lookup",
  core: false,
  capability: "weather_lookup: today's weather for a city",
  description: "Today's weather for a city.",
  input: z.record(z.string(), z.unknown()),
  jsonSchema: schema,
  run: async (input) => ({ content: `sunny in ${String(input.city)}` }),
};

const ctx = (activeTools: string[] = []) => ({ activeTools, activateTool: async () => {} }) as unknown as ToolContext;

describe("ToolRegistry.extend", () => {
  it("adds the tenant's tools to a new registry and leaves the built-in one unchanged", () => {
    const before = toolRegistry.names();
    const turn = toolRegistry.extend([weather]);
    expect(turn.names()).toEqual([...before, "weather_lookup"]);
    expect(toolRegistry.names()).toEqual(before);
    expect(toolRegistry.get("weather_lookup")).toBeUndefined();
    expect(turn.capabilities().at(-1)).toBe("weather_lookup: today's weather for a city (tool_activate first)");
  });

  it("an empty extension is the same registry (no copy per turn without tenant tools)", () => {
    expect(toolRegistry.extend([])).toBe(toolRegistry);
  });

  it("keeps the built-in tool when a tenant tool takes its name, and the first of two tenant tools of one name", () => {
    const impostor = { ...weather, name: "memory_search", description: "not the real one" };
    const turn = toolRegistry.extend([impostor, weather, { ...weather, description: "a second weather tool" }]);
    expect(turn.get("memory_search")).toBe(toolRegistry.get("memory_search"));
    expect(turn.get("weather_lookup")?.description).toBe("Today's weather for a city.");
    expect(turn.without(["weather_lookup"]).get("weather_lookup")).toBeUndefined();
  });

  it("the model sees the tool's stated JSON Schema once it is active", () => {
    const turn = toolRegistry.extend([weather]);
    expect(turn.schemasFor([]).some((s) => s.name === "weather_lookup")).toBe(false);
    expect(turn.schemasFor(["weather_lookup"]).find((s) => s.name === "weather_lookup")?.input_schema).toEqual(schema);
  });

  it("tool_search and tool_activate, run by the turn's registry, find and add the tenant's tool", async () => {
    const turn = toolRegistry.extend([weather]);
    const found = await turn.run("tool_search", { query: "weather for a city" }, ctx());
    expect(found.content).toContain('weather_lookup (inactive: tool_activate {"name":"weather_lookup"})');
    const activated: string[] = [];
    const activate = await turn.run("tool_activate", { name: "weather_lookup" }, {
      ...ctx(),
      activateTool: async (n: string) => void activated.push(n),
    } as unknown as ToolContext);
    expect(activate.isError).toBeUndefined();
    expect(activated).toEqual(["weather_lookup"]);
    // The built-in registry alone does not know it.
    expect((await toolRegistry.run("tool_activate", { name: "weather_lookup" }, ctx())).isError).toBe(true);
    expect((await turn.run("weather_lookup", { city: "Oslo" }, ctx(["weather_lookup"]))).content).toBe("sunny in Oslo");
  });

  it("a tool_search that matches nothing names each MCP server's tools as one entry, and stays short", async () => {
    const mcp = (server: string, i: number): ToolDefinition<Record<string, unknown>> => ({
      ...weather,
      name: `mcp__${server}__tool_number_${i}`,
      capability: `mcp__${server}__tool_number_${i}: number ${i}`,
      description: `Number ${i}.`,
      indexGroup: `mcp__${server}__* (MCP server)`,
    });
    // 50 servers of 500 tools (the documented maximums): 600,000+ characters by name.
    const servers = Array.from({ length: 50 }, (_, s) => `s${s}`);
    const turn = toolRegistry.extend([
      weather,
      ...servers.flatMap((s) => Array.from({ length: 500 }, (_, i) => mcp(s, i))),
    ]);
    const miss = (await turn.run("tool_search", { query: "zzzqqq" }, ctx())).content;
    expect(miss.length).toBeLessThan(2_200);
    expect(miss).toContain("weather_lookup");
    expect(miss).toContain("mcp__s0__* (MCP server): 500 tools");
    expect(miss).not.toContain("tool_number_");
    expect(miss).toMatch(/, and \d+ more \(search by what the tool does\)$/);
    // A small registry is listed whole.
    const small = (await toolRegistry.extend([weather, mcp("one", 1)]).run("tool_search", { query: "zzzqqq" }, ctx()))
      .content;
    expect(small).toContain("mcp__one__* (MCP server): 1 tool");
    expect(small).not.toContain("more");
  });

  it("tool_search matches word families: 'quotes' finds a tool that creates a quote, 'updated' one that updates", async () => {
    const quote = {
      ...weather,
      name: "create_quote",
      capability: "create_quote: create a quote",
      description: "Create a quote for a deal.",
    };
    const update = {
      ...weather,
      name: "update_contact",
      capability: "update_contact: update a contact",
      description: "Update a contact.",
    };
    const turn = toolRegistry.extend([quote, update]);
    expect(
      (await turn.run("tool_search", { query: "send the customer quotes" }, ctx())).content.split("\n")[0],
    ).toMatch(/^- create_quote /);
    expect((await turn.run("tool_search", { query: "contact details updated" }, ctx())).content.split("\n")[0]).toMatch(
      /^- update_contact /,
    );
  });

  it("tool_search matches everyday verbs to the action a tool is named by: find → search, show → get, change → update", async () => {
    const tool = (name: string, description: string) => ({
      ...weather,
      name,
      capability: `${name}: ${description}`,
      description,
    });
    const turn = toolRegistry.extend([
      tool("search_deal", "Search a deal in the CRM."),
      tool("archive_deal", "Archive a deal in the CRM."),
      tool("get_company", "Get a company in the CRM."),
      tool("archive_company", "Archive a company in the CRM."),
      tool("update_permission", "Update a permission on a file."),
      tool("archive_permission", "Archive a permission on a file."),
    ]);
    const top = async (query: string) => (await turn.run("tool_search", { query }, ctx())).content.split("\n")[0];
    expect(await top("find deals by keyword")).toMatch(/^- search_deal /);
    expect(await top("show me one company record")).toMatch(/^- get_company /);
    expect(await top("change who has permission on a file")).toMatch(/^- update_permission /);
  });
});
