// An MCP server's tool list as the platform stores it, against a scripted server (mcp-fake-server.ts):
// a listing taken under a name or url the server no longer has is never stored (a list_changed
// refresh or a POST /refresh racing a PATCH); one odd tool does not sink the whole list; and a
// list too large for one D1 row is refused with a toolsError, the server registered all the same.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { mcpToolSource } from "../../agent/tools/mcp-tools";
import { refreshListing } from "../../services/mcp/listing";
import { getMcpServer, MAX_STORED_TOOLS_BYTES } from "../../services/mcp/servers";
import { toolResults, resultText } from "../blocks";
import { api, createConversation, newTenant, newTenantWithId, send, turnMessages } from "./helpers";
import { FAKE_MCP, gate, installFakeMcp, rpcResult, rpcStream } from "./mcp-fake-server";

const fake = installFakeMcp();
const obj = { type: "object", properties: { q: { type: "string" } } };
const echo = (description: string) => [{ name: "echo", description, inputSchema: obj }];
const toolNames = (s: { tools: { name: string }[] }) => s.tools.map((t) => t.name);

describe("a listing taken under a name or url the server no longer has", () => {
  it("is not stored when a call's list_changed refresh races a rename", async () => {
    const key = await newTenant();
    fake.tools["/race-e"] = echo("echo on e");
    fake.tools["/race-f"] = echo("echo on f");
    const held = gate();
    fake.onCall = async (path, rpc) => {
      if (path === "/race-f") return rpcResult(rpc.id, { content: [{ type: "text", text: "ran on F" }] });
      await held.hold();
      return rpcStream(
        { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
        { jsonrpc: "2.0", id: rpc.id, result: { content: [{ type: "text", text: "ran on E" }] } },
      );
    };
    const e = await api("POST", "/v1/mcp-servers", { name: "old", url: `${FAKE_MCP}/race-e` }, { key });
    const conv = await createConversation(undefined, key);
    const turn = send(conv, `@tool tool_activate {"name":"mcp__old__echo"}\n@tool mcp__old__echo {"q":"x"}`, key);
    await held.entered();
    const renamed = await api("PATCH", `/v1/mcp-servers/${e.json.id}`, { name: "aaa" }, { key });
    expect(toolNames(renamed.json)).toEqual(["mcp__aaa__echo"]);
    held.release();
    await turn;
    const after = await api("GET", `/v1/mcp-servers/${e.json.id}`, undefined, { key });
    expect(after.json.name).toBe("aaa");
    expect(toolNames(after.json)).toEqual(["mcp__aaa__echo"]);
    // The name is free for another server, whose tool is the one a call of mcp__old__echo reaches.
    const f = await api("POST", "/v1/mcp-servers", { name: "old", url: `${FAKE_MCP}/race-f` }, { key });
    expect(f.status).toBe(201);
    const conv2 = await createConversation(undefined, key);
    const t = await send(conv2, `@tool tool_activate {"name":"mcp__old__echo"}\n@tool mcp__old__echo {"q":"x"}`, key);
    expect(resultText(toolResults(turnMessages(t))[1])).toBe("ran on F");
  });

  it("is not stored when a POST /refresh races a rename, or a url change", async () => {
    const key = await newTenant();
    fake.tools["/refresh-1"] = echo("one");
    fake.tools["/refresh-2"] = [{ name: "echo2", description: "two", inputSchema: obj }];
    const s = await api("POST", "/v1/mcp-servers", { name: "r1", url: `${FAKE_MCP}/refresh-1` }, { key });
    /** A refresh whose tools/list is held while `change` is PATCHed (whose own listing is not held). */
    const raced = async (change: Record<string, unknown>) => {
      const held = gate();
      let holding = true;
      fake.onList = async (path, rpc) => {
        if (holding) {
          holding = false;
          await held.hold();
        }
        return rpcResult(rpc.id, { tools: fake.tools[path] ?? [] });
      };
      const refresh = api("POST", `/v1/mcp-servers/${s.json.id}/refresh`, undefined, { key });
      await held.entered();
      expect((await api("PATCH", `/v1/mcp-servers/${s.json.id}`, change, { key })).status).toBe(200);
      held.release();
      const answered = (await refresh).json;
      // The refresh answers the server as it is: its tools named after its name.
      for (const t of answered.tools) expect(t.name.startsWith(`mcp__${answered.name}__`)).toBe(true);
      return (await api("GET", `/v1/mcp-servers/${s.json.id}`, undefined, { key })).json;
    };
    expect(toolNames(await raced({ name: "r2" }))).toEqual(["mcp__r2__echo"]);
    expect(toolNames(await raced({ url: `${FAKE_MCP}/refresh-2` }))).toEqual(["mcp__r2__echo2"]);
  });
});

describe("a tool with an unusual schema", () => {
  it("is judged by itself: the good tools are kept, and the odd ones offered without arguments", async () => {
    const { key, tenantId } = await newTenantWithId();
    fake.tools["/odd"] = [
      { name: "good", description: "fine", inputSchema: obj },
      { name: "untyped", description: "empty schema", inputSchema: {} },
      {
        name: "bad",
        description: "required as a string",
        inputSchema: { type: "object", properties: { a: { type: "string" } }, required: "a" },
      },
      { description: "no name at all", inputSchema: obj },
    ];
    const r = await api("POST", "/v1/mcp-servers", { name: "odd", url: `${FAKE_MCP}/odd` }, { key });
    expect(r.status).toBe(201);
    expect(toolNames(r.json)).toEqual(["mcp__odd__good", "mcp__odd__untyped", "mcp__odd__bad"]);
    expect(r.json.toolsError).toBe("1 tool left out: not a tool with a name");
    const defs = await mcpToolSource.load({ env, tenantId, projectId: null, conversationId: "conv_odd" });
    const def = (name: string) => defs.find((d) => d.name === name)!;
    expect(def("mcp__odd__good").jsonSchema).toEqual(obj);
    expect(def("mcp__odd__untyped").jsonSchema).toEqual({ type: "object" });
    expect(def("mcp__odd__bad").jsonSchema).toEqual({ type: "object", properties: {} });
    expect(def("mcp__odd__bad").description).toMatch(/not valid JSON Schema .*offered without arguments/);
  });

  it("with a tools list that is no list, fails the listing in words, not a validator's dump", async () => {
    const key = await newTenant();
    fake.onList = (_path, rpc) => rpcResult(rpc.id, { tools: "none" });
    const r = await api("POST", "/v1/mcp-servers", { name: "nolist", url: `${FAKE_MCP}/nolist` }, { key });
    expect(r.status).toBe(201);
    expect(r.json.toolsError).toBe("the server's tools/list answer holds no list of tools");
  });
});

describe("a tool list too large for one D1 row", () => {
  const big = {
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: 80 }, (_, i) => [`p${i}`, { type: "string", description: "d".repeat(100) }]),
    ),
  };
  const huge = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, description: "x", inputSchema: big }));

  it("is stored as far as it fits: the tools before the cap, and toolsError names the cap", async () => {
    const key = await newTenant();
    fake.tools["/big"] = echo("small at first");
    const r = await api("POST", "/v1/mcp-servers", { name: "big", url: `${FAKE_MCP}/big` }, { key });
    expect(toolNames(r.json)).toEqual(["mcp__big__echo"]);
    fake.tools["/big"] = huge;
    for (const answer of [
      await api("POST", `/v1/mcp-servers/${r.json.id}/refresh`, undefined, { key }),
      await api("POST", "/v1/mcp-servers", { name: "big", url: `${FAKE_MCP}/big` }, { key: await newTenant() }),
    ]) {
      expect(answer.status).toBeLessThan(300);
      const names = toolNames(answer.json);
      // The server's list in order, up to the first tool that would pass the cap.
      expect(names.length).toBeGreaterThan(0);
      expect(names.length).toBeLessThan(huge.length);
      expect(names).toEqual(huge.slice(0, names.length).map((t) => `mcp__big__${t.name}`));
      expect(new TextEncoder().encode(JSON.stringify(answer.json.tools)).byteLength).toBeLessThanOrEqual(
        MAX_STORED_TOOLS_BYTES,
      );
      expect(answer.json.toolsError).toBe(
        `the tool list was read no further than page 1, where it passed the ${MAX_STORED_TOOLS_BYTES} bytes one server's list may take; the ${names.length} tools before that are listed`,
      );
    }
  });

  it("whose write fails all the same leaves the server registered, the failure in toolsError", async () => {
    const { key, tenantId } = await newTenantWithId();
    fake.tools["/nowrite"] = echo("cannot be stored");
    const r = await api("POST", "/v1/mcp-servers", { name: "nowrite", url: `${FAKE_MCP}/nowrite` }, { key });
    const row = (await getMcpServer(env.DB, tenantId, r.json.id))!;
    // A D1 that refuses every UPDATE, as production's does a row past 2 MB.
    const db = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare")
          return (query: string) => {
            if (/^update/i.test(query)) throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
            return target.prepare(query);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const out = await refreshListing({ ...env, DB: db }, row);
    expect(out.id).toBe(row.id);
    expect(out.toolsError).toMatch(/^the tool list could not be stored: D1_ERROR: string or blob too big/);
    expect(await getMcpServer(env.DB, tenantId, r.json.id)).toEqual(row);
  });
});
