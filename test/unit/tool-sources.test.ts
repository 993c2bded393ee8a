// Every tool source is listed in agent/tools/index.ts: the built-in tools in builtInTools (their
// order is the registry's), the kinds of tenant tool in tenantToolSources (their order is the
// order their tools join a turn). Nothing registers itself when imported.
import { describe, expect, it } from "vitest";
import { builtInTools, createToolRegistry, tenantToolSources, toolRegistry } from "../../agent/tools";
import { tenantTools, type ToolScope, type ToolSource } from "../../agent/tools/external";
import { mcpToolSource } from "../../agent/tools/mcp-tools";
import { registeredToolSource } from "../../agent/tools/registered-tools";
import { ToolRegistry, type ToolDefinition } from "../../agent/tools/registry";

const scope = { tenantId: "t", projectId: null, conversationId: "c" } as unknown as ToolScope;
const tool = (name: string) =>
  ({ name, description: name, capability: name, core: false }) as unknown as ToolDefinition<unknown>;

describe("tool sources", () => {
  it("the registry holds exactly the listed built-in tools, in the listed order", () => {
    const listed = builtInTools(new ToolRegistry()).map((t) => t.name);
    expect(new Set(listed).size).toBe(listed.length);
    expect(toolRegistry.names()).toEqual(listed);
  });

  it("a registry built again from the list is the same, schemas and index lines byte for byte", () => {
    const again = createToolRegistry();
    expect(again).not.toBe(toolRegistry);
    expect(JSON.stringify(again.schemasFor(again.names()))).toBe(
      JSON.stringify(toolRegistry.schemasFor(toolRegistry.names())),
    );
    expect(JSON.stringify(again.schemasFor())).toBe(JSON.stringify(toolRegistry.schemasFor()));
    expect(again.capabilities()).toEqual(toolRegistry.capabilities());
  });

  it("tool_search and tool_activate of a registry fall back to that registry", async () => {
    const registry = createToolRegistry();
    const ctx = { activeTools: [], activateTool: async () => {} };
    const found = await registry.get("tool_search")!.run({ query: "pdf pages" }, ctx as never);
    expect(found.content).toContain("pdf_read");
  });

  it("the kinds of tenant tool are listed once each: MCP servers', then registered ones", () => {
    expect(tenantToolSources).toEqual([mcpToolSource, registeredToolSource]);
    expect(tenantToolSources.map((s) => s.kind)).toEqual(["mcp", "registered"]);
  });

  it("a turn's tenant tools come only from the sources given, in their order, each sorted by name; a failing one is left out", async () => {
    const first: ToolSource = { kind: "first", load: async () => [tool("zeta"), tool("alpha")] };
    const broken: ToolSource = { kind: "broken", load: async () => Promise.reject(new Error("down")) };
    const second: ToolSource = { kind: "second", load: async () => [tool("beta")] };
    const errors = console.error;
    console.error = () => {};
    try {
      expect((await tenantTools(scope, [first, broken, second])).map((t) => t.name)).toEqual(["alpha", "zeta", "beta"]);
      expect((await tenantTools(scope, [second, first])).map((t) => t.name)).toEqual(["beta", "alpha", "zeta"]);
      expect(await tenantTools(scope, [])).toEqual([]);
    } finally {
      console.error = errors;
    }
  });
});
