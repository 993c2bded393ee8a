// Remote MCP servers end to end inside workerd, against real MCP servers built with the SDK's
// server classes (test/mcp-servers/fixture-server.ts, started by the project's globalSetup):
// registration and its checks, Streamable HTTP with the SSE fallback, the sealed auth header,
// one index line per server, tool_search/tool_activate, every result mapping, failures as
// is_error results, and a tool list that changes without moving today's prompt prefix.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { MCP_MAX_MESSAGE_BYTES } from "../../core/tenant-tool-rules";
import { app } from "../../workers/chat/app";
import { api, createConversation, newTenant, send, transcript, turnMessages } from "./helpers";
import { toolResults, ofType } from "../blocks";
import type { ContentBlock, ToolResultBlock } from "../../core/types";
import type { ApiError } from "../route-types";

const fixture = (path = "/mcp") => `http://127.0.0.1:${inject("mcpFixturePort")}${path}`;
const TOKEN = "Bearer fixture-secret-token";
const replay = async (id: string, key: string) =>
  (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
const results = (turn: { text: string }) => toolResults(turnMessages(turn));
const text = (r: ToolResultBlock) =>
  typeof r.content === "string"
    ? r.content
    : r.content.map((b) => (b.type === "text" ? b.text : `<${b.type}>`)).join("\n");

let key: string;
beforeAll(async () => {
  key = await newTenant();
});

describe("MCP server registration", () => {
  it("lists a Streamable HTTP server's tools, names them mcp__<server>__<tool>, and pages the list", async () => {
    const r = await api("POST", "/v1/mcp-servers", { name: "fix", url: fixture() }, { key });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      name: "fix",
      transport: "streamable-http",
      toolsError: null,
      hasAuth: false,
      projectId: null,
      timeoutMs: 30000,
    });
    expect(r.json.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["mcp__fix__add", "mcp__fix__pixel", "mcp__fix__links", "mcp__fix__grow"]),
    );
    expect(r.json.tools.find((t) => t.name === "mcp__fix__add")).toEqual({
      name: "mcp__fix__add",
      mcpName: "add",
      description: "Adds two numbers",
    });
    expect((await api("GET", `/v1/mcp-servers/${r.json.id}`, undefined, { key })).json.tools).toEqual(r.json.tools);

    await api("POST", "/v1/mcp-servers", { name: "fix2", url: fixture() }, { key });
    const page1 = await api("GET", "/v1/mcp-servers?limit=1", undefined, { key });
    expect(page1.json.data).toHaveLength(1);
    const page2 = await api("GET", `/v1/mcp-servers?limit=1&cursor=${page1.json.next}`, undefined, { key });
    expect([page1.json.data[0].name, page2.json.data[0].name].sort()).toEqual(["fix", "fix2"]);
    expect((await api("DELETE", `/v1/mcp-servers/${page1.json.data[0].id}`, undefined, { key })).status).toBe(204);
    expect((await api("GET", `/v1/mcp-servers/${page1.json.data[0].id}`, undefined, { key })).status).toBe(404);
  });

  it("falls back to the SSE transport for a server that only speaks HTTP+SSE", async () => {
    const r = await api("POST", "/v1/mcp-servers", { name: "legacy", url: fixture("/sse") }, { key });
    expect(r.status).toBe(201);
    expect(r.json.transport).toBe("sse");
    expect(r.json.tools.map((t) => t.name)).toContain("mcp__legacy__add");
    const id = await createConversation(undefined, key);
    const turn = await send(
      id,
      `@tool tool_activate {"name":"mcp__legacy__add"}\n@tool mcp__legacy__add {"a":40,"b":2}`,
      key,
    );
    expect(text(results(turn)[1])).toBe("sum=42");
    await api("DELETE", `/v1/mcp-servers/${r.json.id}`, undefined, { key });
  });

  it("refuses bad input with a 400 naming the field, a taken name with a 409, and writes nothing", async () => {
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_servers").first<{ n: number }>();
    const cases: [unknown, number, RegExp][] = [
      [{ name: "Bad Name", url: fixture() }, 400, /name/],
      [{ name: "x".repeat(25), url: fixture() }, 400, /name/],
      [{ name: "ok", url: "http://10.0.0.5/mcp" }, 400, /url: .*only https/],
      [{ name: "ok", url: "https://10.0.0.5/mcp" }, 400, /url: private/],
      [{ name: "ok", url: "https://169.254.169.254/mcp" }, 400, /url: private/],
      [{ name: "ok", url: "https://user:pw@example.com/mcp" }, 400, /url: credentials/],
      [{ name: "ok", url: fixture(), auth: { value: "a\r\nx: y" } }, 400, /auth\.value/],
      [
        { name: "ok", url: fixture(), auth: { value: "Bearer 🔑" } },
        400,
        /auth\.value: no line breaks, control characters or characters past U\+00FF/,
      ],
      [{ name: "ok", url: fixture(), timeoutMs: 10 }, 400, /timeoutMs/],
      [
        { name: "ok", url: fixture(), projectId: "proj_01ARZ3NDEKTSV4RRFFQ69G5FAV" },
        400,
        /^projectId: no such project$/,
      ],
      [{ name: "ok", url: fixture(), extra: 1 }, 400, /extra/],
    ];
    for (const [body, status, message] of cases) {
      const r = await api("POST", "/v1/mcp-servers", body, { key });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error?.message, JSON.stringify(body)).toMatch(message);
    }
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_servers").first<{ n: number }>();
    expect(after!.n).toBe(before!.n);
    const first = await api("POST", "/v1/mcp-servers", { name: "taken", url: fixture() }, { key });
    const again = await api("POST", "/v1/mcp-servers", { name: "taken", url: fixture() }, { key });
    expect(again.status).toBe(409);
    expect(again.json.error).toMatchObject({ type: "conflict" });
    const other = await api("POST", "/v1/mcp-servers", { name: "other", url: fixture() }, { key });
    expect((await api("PATCH", `/v1/mcp-servers/${other.json.id}`, { name: "taken" }, { key })).status).toBe(409);
    for (const id of [first.json.id, other.json.id]) await api("DELETE", `/v1/mcp-servers/${id}`, undefined, { key });
  });

  it('refuses loopback unless ALLOW_LOOPBACK_TOOLS is "true"', async () => {
    const post = (vars: Record<string, unknown>) =>
      app.request(
        "/v1/mcp-servers",
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "loop", url: fixture() }),
        },
        { ...env, ...vars },
      );
    for (const off of [{ ALLOW_LOOPBACK_TOOLS: undefined }, { ALLOW_LOOPBACK_TOOLS: "false" }]) {
      const r = await post(off);
      expect(r.status).toBe(400);
      expect(await r.text()).toMatch(/url: only https|loopback/);
    }
    // Anything but "true" or "false" is a misconfiguration, named, never read as either.
    const odd = await post({ ALLOW_LOOPBACK_TOOLS: "1" });
    expect(odd.status).toBe(500);
    expect(((await odd.json()) as { error: ApiError }).error).toMatchObject({
      type: "config_invalid",
      message: expect.stringContaining("ALLOW_LOOPBACK_TOOLS"),
    });
    const on = await post({});
    expect(on.status).toBe(201);
    await api("DELETE", `/v1/mcp-servers/${((await on.json()) as { id: string }).id}`, undefined, { key });
  });

  it("does not follow a redirect to a private address", async () => {
    const r = await api("POST", "/v1/mcp-servers", { name: "bounce", url: fixture("/redirect") }, { key });
    expect(r.status).toBe(201);
    expect(r.json.tools).toEqual([]);
    expect(r.json.toolsError).toMatch(/10\.0\.0\.1/);
    await api("DELETE", `/v1/mcp-servers/${r.json.id}`, undefined, { key });
  });

  it("seals the auth header: sent to the server, never returned, never stored in the clear", async () => {
    const without = await api("POST", "/v1/mcp-servers", { name: "private", url: fixture("/private/mcp") }, { key });
    expect(without.json.tools).toEqual([]);
    expect(without.json.toolsError).toMatch(/401|nauthori/);
    const patched = await api("PATCH", `/v1/mcp-servers/${without.json.id}`, { auth: { value: TOKEN } }, { key });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ hasAuth: true, toolsError: null });
    expect(patched.json.tools.length).toBeGreaterThan(0);
    const views = [
      patched.text,
      (await api("GET", `/v1/mcp-servers/${without.json.id}`, undefined, { key })).text,
      (await api("GET", "/v1/mcp-servers", undefined, { key })).text,
    ];
    const row = await env.DB.prepare("SELECT * FROM mcp_servers WHERE id = ?").bind(without.json.id).first();
    for (const v of [...views, JSON.stringify(row)]) expect(v).not.toContain("fixture-secret-token");
    // The sealed value is bound to its row: copied into another server it does not open.
    const twin = await api("POST", "/v1/mcp-servers", { name: "twin", url: fixture("/private/mcp") }, { key });
    await env.DB.prepare("UPDATE mcp_servers SET auth_sealed = ? WHERE id = ?")
      .bind((row as { auth_sealed: unknown }).auth_sealed, twin.json.id)
      .run();
    expect((await api("POST", `/v1/mcp-servers/${twin.json.id}/refresh`, undefined, { key })).json.toolsError).toMatch(
      /decrypt|operation|OperationError/i,
    );
    for (const id of [without.json.id, twin.json.id]) await api("DELETE", `/v1/mcp-servers/${id}`, undefined, { key });
  });
});

describe("MCP tools in a turn", () => {
  let k: string;
  let serverId: string;
  beforeAll(async () => {
    k = await newTenant();
    serverId = (await api("POST", "/v1/mcp-servers", { name: "fx", url: fixture() }, { key: k })).json.id;
  });

  it("adds one index line per server, finds tools with tool_search, and carries a schema only once active", async () => {
    const id = await createConversation(undefined, k);
    const before = await replay(id, k);
    const system = before.system[0].text as string;
    expect(system).toContain(
      "- mcp__fx__* (MCP server): 9 tools (add, big, fail, fake, grow, …); tool_search finds them\n",
    );
    expect(system).not.toContain("mcp__fx__add:");
    expect(before.tools.map((t) => t.name)).not.toContain("mcp__fx__add");

    const early = await send(id, `@tool mcp__fx__add {"a":1,"b":2}`, k);
    expect(results(early)[0]).toMatchObject({ is_error: true });
    const found = await send(id, `@tool tool_search {"query":"add two numbers"}`, k);
    expect(text(results(found)[0]).split("\n")[0]).toMatch(/^- mcp__fx__add \(inactive/);
    const turn = await send(id, `@tool tool_activate {"name":"mcp__fx__add"}\n@tool mcp__fx__add {"a":1,"b":2}`, k);
    expect(text(results(turn)[1])).toBe("sum=3");
    const schema = (await replay(id, k)).tools.find((t) => t.name === "mcp__fx__add");
    expect(schema!.input_schema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
    });
  });

  it("maps images, resource links and embedded resources, and reports failures and timeouts as is_error results", async () => {
    const id = await createConversation(undefined, k);
    const names = ["pixel", "fake_image", "links", "fail"];
    await send(id, names.map((n) => `@tool tool_activate {"name":"mcp__fx__${n}"}`).join("\n"), k);
    const r = results(await send(id, names.map((n) => `@tool mcp__fx__${n} {}`).join("\n"), k));
    expect((r[0].content as ContentBlock[]).map((b) => b.type)).toEqual(["text", "image"]);
    expect(ofType((r[0].content as ContentBlock[])[1], "image").source).toMatchObject({
      type: "base64",
      media_type: "image/png",
    });
    expect(text(r[1])).toMatch(/\[image not shown: the bytes are not a image\/png image\]/);
    expect(typeof r[1].content).toBe("string");
    expect(text(r[2])).toContain("[resource link: guide.md <file:///docs/guide.md> text/markdown]");
    expect(text(r[2])).toContain("[resource <file:///docs/notes.txt> text/plain]\nembedded notes body");
    expect(r[3]).toMatchObject({ is_error: true, content: "the fixture failed on purpose" });

    await api("PATCH", `/v1/mcp-servers/${serverId}`, { timeoutMs: 1000 }, { key: k });
    await send(id, `@tool tool_activate {"name":"mcp__fx__slow"}`, k);
    const slow = results(await send(id, `@tool mcp__fx__slow {"ms":3000}`, k))[0];
    expect(slow.is_error).toBe(true);
    expect(slow.content).toMatch(/no answer within 1000 ms/);
    await api("PATCH", `/v1/mcp-servers/${serverId}`, { timeoutMs: 30000 }, { key: k });
  });

  it("takes a tools/list_changed (or a refresh) into the cache at once, without moving today's prompt prefix", async () => {
    const id = await createConversation(undefined, k);
    await send(id, `@tool tool_activate {"name":"mcp__fx__grow"}`, k);
    const before = await replay(id, k);
    const grown = results(await send(id, `@tool mcp__fx__grow {"name":"sprout"}`, k))[0];
    expect(text(grown)).toBe("grew sprout");
    const listed = (await api("GET", `/v1/mcp-servers/${serverId}`, undefined, { key: k })).json;
    expect(listed.tools.map((t) => t.name)).toContain("mcp__fx__sprout");
    // The prefix (system prompt and schemas) is the day's: the new tool is not in it.
    const after = await replay(id, k);
    expect(after.system).toEqual(before.system);
    expect(after.tools).toEqual(before.tools);

    // A refresh with nothing new keeps the list; a new conversation sees the new tool at once.
    const refreshed = await api("POST", `/v1/mcp-servers/${serverId}/refresh`, undefined, { key: k });
    expect(refreshed.json.tools.map((t) => t.name)).toContain("mcp__fx__sprout");
    const fresh = await createConversation(undefined, k);
    const run = results(
      await send(fresh, `@tool tool_activate {"name":"mcp__fx__sprout"}\n@tool mcp__fx__sprout {}`, k),
    );
    expect(text(run[1])).toBe("sprout ran");
  });

  it("names a server's kept tools after its new name when it is renamed while down, so they shadow no other server's", async () => {
    const key = await newTenant();
    const first = await api("POST", "/v1/mcp-servers", { name: "zeta", url: fixture() }, { key });
    expect(first.status).toBe(201);
    // Renamed and moved to an address that answers nothing: the listing fails, the last good list stays.
    const renamed = await api(
      "PATCH",
      `/v1/mcp-servers/${first.json.id}`,
      { name: "alpha", url: "http://127.0.0.1:9/mcp", timeoutMs: 1000 },
      { key },
    );
    expect(renamed.json.toolsError).toBeTruthy();
    expect(renamed.json.tools.length).toBeGreaterThan(0);
    expect(renamed.json.tools.every((t: { name: string }) => t.name.startsWith("mcp__alpha__"))).toBe(true);
    // A new server takes the old name: its own tools answer under it.
    expect((await api("POST", "/v1/mcp-servers", { name: "zeta", url: fixture() }, { key })).status).toBe(201);
    const id = await createConversation(undefined, key);
    const turn = await send(
      id,
      `@tool tool_activate {"name":"mcp__zeta__add"}\n@tool mcp__zeta__add {"a":40,"b":2}`,
      key,
    );
    expect(JSON.stringify(results(turn)[1].content)).toContain("sum=42");
  });

  it("keeps a project's server to that project's conversations", async () => {
    const proj = (await api("POST", "/v1/projects", { name: "p" }, { key: k })).json.id;
    await api("POST", "/v1/mcp-servers", { name: "projonly", url: fixture(), projectId: proj }, { key: k });
    const inProject = (await api("POST", "/v1/conversations", { title: "in", projectId: proj }, { key: k })).json.id;
    const outside = await createConversation(undefined, k);
    expect((await replay(inProject, k)).system[0].text).toContain("mcp__projonly__*");
    expect((await replay(outside, k)).system[0].text).not.toContain("mcp__projonly__*");
    const r = results(await send(outside, `@tool tool_activate {"name":"mcp__projonly__add"}`, k))[0];
    expect(r).toMatchObject({ is_error: true });
    // Deleting the project deletes its servers.
    const serverOf = async () =>
      (await api("GET", "/v1/mcp-servers", undefined, { key: k })).json.data.find((s) => s.name === "projonly");
    expect(await serverOf()).toBeDefined();
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key: k })).status).toBe(204);
    expect(await serverOf()).toBeUndefined();
  });
});

describe("MCP results past the caps", () => {
  let k: string;
  beforeAll(async () => {
    k = await newTenant();
  });
  const register = async (name: string, path: string) => {
    const r = await api("POST", "/v1/mcp-servers", { name, url: fixture(path), timeoutMs: 20_000 }, { key: k });
    expect(r.status, r.text).toBe(201);
    expect(r.json.toolsError).toBeNull();
  };
  const call = async (id: string, tool: string, input: unknown) =>
    results(await send(id, `@tool tool_activate {"name":"${tool}"}\n@tool ${tool} ${JSON.stringify(input)}`, k))[1];
  const capMessage = (server: string, tool: string) =>
    new RegExp(
      `^MCP tool ${tool} on "${server}" failed: a message from the server passed ${MCP_MAX_MESSAGE_BYTES} bytes`,
    );

  it("answers a result past one message's cap with an is_error naming the limit, on every transport, and the conversation goes on", async () => {
    await register("cap", "/mcp");
    await register("capjson", "/json/mcp");
    await register("capsse", "/sse");
    const id = await createConversation(undefined, k);
    for (const server of ["cap", "capjson", "capsse"]) {
      const r = await call(id, `mcp__${server}__oversized`, { mb: 7 });
      expect(r.is_error, server).toBe(true);
      expect(text(r), server).toMatch(capMessage(server, "oversized"));
    }
    const next = await send(id, `@tool tool_activate {"name":"mcp__cap__add"}\n@tool mcp__cap__add {"a":2,"b":3}`, k);
    expect(next.status).toBe(200);
    expect(text(results(next)[1])).toBe("sum=5");
    expect(JSON.stringify(await transcript(id, k))).not.toContain("OVERSIZED");
  });

  it("stops reading an answer that never ends at the cap: the server sees its reader go away", async () => {
    await register("flood", "/flood/mcp");
    const id = await createConversation(undefined, k);
    const r = await call(id, "mcp__flood__add", { a: 1, b: 2 });
    expect(r.is_error).toBe(true);
    expect(text(r)).toMatch(capMessage("flood", "add"));
    const { written, total } = (await (await fetch(fixture("/flood/written"))).json()) as {
      written: number;
      total: number;
    };
    expect(written).toBeGreaterThan(MCP_MAX_MESSAGE_BYTES);
    expect(written).toBeLessThan(total);

    // A tool list past the cap fails the listing the same way.
    const listed = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "floodlist", url: fixture("/flood/mcp?on=tools/list"), timeoutMs: 20_000 },
      { key: k },
    );
    expect(listed.status).toBe(201);
    expect(listed.json.tools).toEqual([]);
    expect(listed.json.toolsError).toMatch(
      new RegExp(`^a message from the server passed ${MCP_MAX_MESSAGE_BYTES} bytes`),
    );
  });

  it("keeps a result's text to 1 MiB, as for an HTTP tool's answer", async () => {
    await register("captext", "/mcp");
    const id = await createConversation(undefined, k);
    const over = await call(id, "mcp__captext__big", { kb: 1100 });
    expect(over.is_error).toBe(true);
    expect(text(over)).toMatch(
      /^MCP tool big on "captext" returned 1126418 bytes of text, more than the 1048576 one MCP tool result may hold/,
    );
    const under = await call(id, "mcp__captext__big", { kb: 1000 });
    expect(under.is_error).toBeUndefined();
    expect(text(under).length).toBe(1000 * 1024 + "BIG-START  BIG-END".length);
  }, 60_000);
});

describe("checkedFetch", () => {
  it("checks every request's URL and never lets fetch follow a redirect itself", async () => {
    const { checkedFetch, OutboundRefused } = await import("../../services/mcp/connect");
    await expect(checkedFetch({})(fixture())).rejects.toBeInstanceOf(OutboundRefused);
    await expect(checkedFetch({ ALLOW_LOOPBACK_TOOLS: "true" })("https://10.1.2.3/mcp")).rejects.toThrow(/private/);
    const hop = await checkedFetch({ ALLOW_LOOPBACK_TOOLS: "true" })(fixture("/redirect"));
    expect(hop.status).toBe(307);
    expect(hop.headers.get("location")).toBe("http://10.0.0.1/mcp");
  });
});
