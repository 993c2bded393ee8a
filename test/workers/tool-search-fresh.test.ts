// A tool registered while a conversation is open: its object keeps the tenant's tool list for
// TENANT_TOOLS_TTL_MS, but a lookup that misses (tool_search finding nothing, tool_activate or a
// call naming a tool the list lacks) reads the list again once in the turn, so the new tool is
// found, activated and called at once. A model searching for nonsense does not re-read every time.
import { describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";
import type { ToolResultBlock } from "../../core/types";
import { toolResults } from "../blocks";
import { toolRegistry } from "../../agent/tools";
import type { ToolContext, ToolDefinition } from "../../agent/tools/registry";

const server = inject("httpToolServer");

async function register(key: string, name: string, tag: string) {
  const r = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name,
      description: "Current weather for a city.",
      inputSchema: { type: "object", properties: { city: { type: "string" } } },
      endpoint: `${server}/echo?key=${tag}`,
    },
    { key },
  );
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${r.text}`);
}

const textOf = (b: ToolResultBlock) =>
  typeof b.content === "string" ? b.content : b.content.map((c) => (c.type === "text" ? c.text : "")).join("");

/** A conversation that has run a turn: its object holds the tenant's (empty) tool list. */
async function openConversation(key: string) {
  const id = await createConversation(undefined, key);
  const first = await send(id, `@tool tool_search {"query":"weather"}`, key);
  expect(textOf(toolResults(turnMessages(first))[0])).toContain('no tool matches "weather"');
  return id;
}

describe("a tool registered while a conversation is open", () => {
  it("is found by tool_search, activated and called in the next turn", async () => {
    const key = await newTenant();
    const id = await openConversation(key);
    await register(key, "weather_now", "fresh1");
    const r = await send(
      id,
      [
        "@tools-per-step 1",
        `@tool tool_search {"query":"weather"}`,
        `@tool tool_activate {"name":"weather_now"}`,
        `@tool weather_now {"city":"Paris"}`,
      ].join("\n"),
      key,
    );
    expect(r.status).toBe(200);
    const [found, activated, called] = toolResults(turnMessages(r));
    expect(textOf(found)).toContain('weather_now (inactive: tool_activate {"name":"weather_now"})');
    expect(activated.is_error).toBeUndefined();
    expect(textOf(activated)).toBe("weather_now is active in this conversation from your next step on");
    expect(called.is_error).toBeUndefined();
    expect(JSON.parse(textOf(called))).toMatchObject({ received: { city: "Paris" } });
  });

  it("is activated by name without a search first, and a call before activation asks for tool_activate", async () => {
    const key = await newTenant();
    const id = await openConversation(key);
    await register(key, "weather_later", "fresh2");
    const early = await send(id, `@tool weather_later {"city":"Oslo"}`, key);
    expect(toolResults(turnMessages(early))[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining('call tool_activate {"name":"weather_later"} first'),
    });

    const key2 = await newTenant();
    const id2 = await openConversation(key2);
    await register(key2, "weather_direct", "fresh3");
    const r = await send(
      id2,
      `@tools-per-step 1\n@tool tool_activate {"name":"weather_direct"}\n@tool weather_direct {"city":"Rome"}`,
      key2,
    );
    const [activated, called] = toolResults(turnMessages(r));
    expect(textOf(activated)).toBe("weather_direct is active in this conversation from your next step on");
    expect(JSON.parse(textOf(called))).toMatchObject({ received: { city: "Rome" } });
  });
});

describe("the re-read on a miss", () => {
  const extra: ToolDefinition<unknown> = {
    name: "late_tool",
    description: "A tool the list gained.",
    capability: "late_tool: a tool the list gained",
    core: false,
    input: z.object({}),
    run: async () => ({ content: "ran" }),
  };
  const ctx = (activeTools: string[]) =>
    ({
      tenantId: "t",
      conversationId: "c",
      activeTools,
      activateTool: async () => {},
      progress() {},
    }) as unknown as ToolContext;

  it("reads the list at most once per turn's registry, however many lookups miss", async () => {
    let reads = 0;
    let list: ToolDefinition<unknown>[] = [];
    const registry = toolRegistry.withReread(async () => {
      reads++;
      return list;
    });
    for (const query of ["zzqx", "qqzz vvkk", "xxzz"]) {
      const out = await registry.run("tool_search", { query }, ctx([]));
      expect(out.content).toContain("no tool matches");
    }
    expect((await registry.run("tool_activate", { name: "nothing_here" }, ctx([]))).isError).toBe(true);
    expect((await registry.run("nothing_here", {}, ctx([]))).content).toContain('unknown tool "nothing_here"');
    expect(reads).toBe(1);
    // A tool the list gains after the turn's one re-read waits for the next turn's registry.
    list = [extra];
    expect((await registry.run("tool_activate", { name: "late_tool" }, ctx([]))).content).toContain("no tool named");
    const next = toolRegistry.withReread(async () => {
      reads++;
      return list;
    });
    expect((await next.run("late_tool", {}, ctx(["late_tool"]))).content).toBe("ran");
    expect(reads).toBe(2);
    // The built-in registry itself never gains the tenant's tools.
    expect(toolRegistry.get("late_tool")).toBeUndefined();
  });
});
