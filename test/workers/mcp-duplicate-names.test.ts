// A server listing two tools under one mapped name keeps the first; the one left out is named in
// toolsError, as every other tool the listing leaves out is.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

const fake = installFakeMcp();
const obj = { type: "object", properties: { q: { type: "string" } } };

describe("an MCP tool list with a name twice", () => {
  it("keeps the first and says in toolsError which tool was left out", async () => {
    const key = await newTenant();
    fake.tools["/dupes"] = [
      { name: "echo", description: "first echo", inputSchema: obj },
      { name: "other", description: "other", inputSchema: obj },
      { name: "echo", description: "second echo", inputSchema: obj },
    ];
    const s = await api("POST", "/v1/mcp-servers", { name: "dupes", url: `${FAKE_MCP}/dupes` }, { key });
    expect(s.status).toBe(201);
    const tools = s.json.tools as { name: string; description: string }[];
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ["mcp__dupes__echo", "first echo"],
      ["mcp__dupes__other", "other"],
    ]);
    expect(s.json.toolsError).toBe("1 tool left out: the name of a tool listed before it (echo)");
  });

  it("a list without duplicates has no toolsError", async () => {
    const key = await newTenant();
    fake.tools["/nodupes"] = [{ name: "echo", description: "echo", inputSchema: obj }];
    const s = await api("POST", "/v1/mcp-servers", { name: "nodupes", url: `${FAKE_MCP}/nodupes` }, { key });
    expect(s.json.toolsError).toBeNull();
  });
});

describe("many repeated names", () => {
  it("are counted in full and the first five named", async () => {
    const key = await newTenant();
    const names = ["a", "b", "c", "d", "e", "f"];
    fake.tools["/manydupes"] = [...names, ...names, "a"].map((name) => ({ name, description: name, inputSchema: obj }));
    const s = await api("POST", "/v1/mcp-servers", { name: "manydupes", url: `${FAKE_MCP}/manydupes` }, { key });
    expect((s.json.tools as unknown[]).length).toBe(6);
    expect(s.json.toolsError).toBe("7 tools left out: the name of a tool listed before it (a, b, c, d, e, …)");
  });
});
