// Guards around the tenant tool registry: a running conversation calls an HTTP tool as its row is
// now (a deleted tool is not called, removed headers are not sent); per-tenant counts of tools and
// MCP servers are capped; MCP server names keep mcp__<server>__<tool> unambiguous; and two PATCHes
// of one tool (or MCP server) at once never leave headers on an endpoint they were not given for.
import { env } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, inject, it } from "vitest";
import { sortableId } from "../../core/ids";
import { mcpServers, tools } from "../../db/schema";
import { MAX_MCP_SERVERS } from "../../services/mcp/servers";
import { MAX_TOOLS } from "../../services/tools/tool-store";
import { toolResults } from "../blocks";
import { api, createConversation, newTenantWithId, send, turnMessages } from "./helpers";

const server = inject("httpToolServer");
const schema = { type: "object", properties: { city: { type: "string" } } };
type Seen = { headers: Record<string, string | undefined> };
const seen = async (tag: string): Promise<Seen[]> =>
  (await (await fetch(`${server}/_seen?key=${tag}`)).json()) as Seen[];

async function registerHttp(key: string, name: string, extra: Record<string, unknown>) {
  const r = await api(
    "POST",
    "/v1/tools",
    { kind: "http", name, description: `${name} calls the test server.`, inputSchema: schema, ...extra },
    { key },
  );
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${r.text}`);
  return r.json as { id: string };
}

describe("an HTTP tool in a running conversation", () => {
  it("sends no header the tool no longer has, and does not call a deleted tool", async () => {
    const { key } = await newTenantWithId();
    const tag = `staleB1-${crypto.randomUUID()}`;
    const tool = await registerHttp(key, "stale_echo", {
      endpoint: `${server}/echo?key=${tag}`,
      headers: { Authorization: "Bearer sk-revoked-0123456789" },
    });
    const id = await createConversation(undefined, key);
    await send(id, `@tool tool_activate {"name":"stale_echo"}`, key);
    const first = await send(id, `@tool stale_echo {"city":"Paris"}`, key);
    expect(toolResults(turnMessages(first))[0].is_error).toBeUndefined();
    expect((await seen(tag)).at(-1)!.headers.authorization).toBe("Bearer sk-revoked-0123456789");

    expect((await api("PATCH", `/v1/tools/${tool.id}`, { headers: null }, { key })).status).toBe(200);
    const second = await send(id, `@tool stale_echo {"city":"Paris"}`, key);
    expect(toolResults(turnMessages(second))[0].is_error).toBeUndefined();
    const calls = await seen(tag);
    expect(calls).toHaveLength(2);
    expect(calls.at(-1)!.headers.authorization).toBeUndefined();

    expect((await api("DELETE", `/v1/tools/${tool.id}`, undefined, { key })).status).toBe(204);
    const third = await send(id, `@tool stale_echo {"city":"Paris"}`, key);
    expect(toolResults(turnMessages(third))[0]).toMatchObject({
      is_error: true,
      content: expect.stringContaining("the tool stale_echo is no longer registered"),
    });
    expect(await seen(tag)).toHaveLength(2);
  });
});

describe("per-tenant limits", () => {
  it(`refuses a tenant's tool past ${MAX_TOOLS} with a 409 naming the limit, and writes nothing`, async () => {
    const { tenantId, key } = await newTenantWithId();
    const now = new Date().toISOString();
    const rows = Array.from({ length: MAX_TOOLS - 1 }, (_, i) => ({
      id: sortableId("tool"),
      tenantId,
      projectId: null,
      kind: "client",
      name: `seeded_${i}`,
      description: "A seeded tool.",
      inputSchema: JSON.stringify(schema),
      endpoint: null,
      timeoutMs: 10_000,
      maxResponseBytes: 1024,
      createdAt: now,
      updatedAt: now,
    }));
    const db = drizzle(env.DB);
    for (let i = 0; i < rows.length; i += 5) await db.insert(tools).values(rows.slice(i, i + 5));
    const body = (name: string) => ({ kind: "client", name, description: "One more.", inputSchema: schema });
    expect((await api("POST", "/v1/tools", body("last_one"), { key })).status).toBe(201);
    const over = await api("POST", "/v1/tools", body("one_too_many"), { key });
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({ type: "conflict", message: expect.stringContaining(`${MAX_TOOLS} tools`) });
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM tools WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ n: number }>();
    expect(count!.n).toBe(MAX_TOOLS);
    // Another tenant is not counted against it.
    const other = await newTenantWithId();
    expect((await api("POST", "/v1/tools", body("one_too_many"), { key: other.key })).status).toBe(201);
  });

  it(`refuses a tenant's MCP server past ${MAX_MCP_SERVERS} with a 409 naming the limit, and writes nothing`, async () => {
    const { tenantId, key } = await newTenantWithId();
    const now = new Date().toISOString();
    const rows = Array.from({ length: MAX_MCP_SERVERS }, (_, i) => ({
      id: sortableId("mcp"),
      tenantId,
      projectId: null,
      name: `seeded-${i}`,
      url: "https://mcp.example.com/mcp",
      authSealed: null,
      timeoutMs: 30_000,
      createdAt: now,
      updatedAt: now,
    }));
    const db = drizzle(env.DB);
    for (let i = 0; i < rows.length; i += 5) await db.insert(mcpServers).values(rows.slice(i, i + 5));
    const over = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "one-too-many", url: "https://mcp.example.com/x" },
      { key },
    );
    expect(over.status).toBe(409);
    expect(over.json.error).toMatchObject({
      type: "conflict",
      message: expect.stringContaining(`${MAX_MCP_SERVERS} MCP servers`),
    });
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_servers WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ n: number }>();
    expect(count!.n).toBe(MAX_MCP_SERVERS);
  });
});

describe("MCP server names", () => {
  it('refuses "__" and a leading or trailing "_" (mcp__<server>__<tool> must name one server), and keeps older rows usable', async () => {
    const { tenantId, key } = await newTenantWithId();
    for (const name of ["a__b", "_a", "a_", "__"]) {
      const r = await api("POST", "/v1/mcp-servers", { name, url: "https://mcp.example.com/mcp" }, { key });
      expect(r.status, name).toBe(400);
      expect(r.json.error?.message, name).toMatch(/name: .*"__"/);
    }
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_servers WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ n: number }>();
    expect(count!.n).toBe(0);
    // A row stored before the rule can still be read and changed (other than to a bad name).
    const now = new Date().toISOString();
    const id = sortableId("mcp");
    await drizzle(env.DB)
      .insert(mcpServers)
      .values({ id, tenantId, name: "old__name", url: "https://mcp.example.com/mcp", createdAt: now, updatedAt: now });
    expect((await api("GET", `/v1/mcp-servers/${id}`, undefined, { key })).json.name).toBe("old__name");
    expect((await api("PATCH", `/v1/mcp-servers/${id}`, { timeoutMs: 5_000 }, { key })).status).toBe(200);
    expect((await api("PATCH", `/v1/mcp-servers/${id}`, { name: "new__name" }, { key })).status).toBe(400);
  });
});

describe("concurrent PATCHes of one tool", () => {
  it("never leave headers on an endpoint other than the one they were given for", async () => {
    const { key } = await newTenantWithId();
    for (let i = 0; i < 20; i++) {
      const tool = await registerHttp(key, `race_${i}`, {
        endpoint: "https://tools.example.com/ok",
        headers: { Authorization: "Bearer old" },
      });
      const [move, secret] = await Promise.all([
        api("PATCH", `/v1/tools/${tool.id}`, { endpoint: "https://attacker.example.net/steal" }, { key }),
        api("PATCH", `/v1/tools/${tool.id}`, { headers: { Authorization: "Bearer new" } }, { key }),
      ]);
      for (const r of [move, secret]) {
        expect([200, 409]).toContain(r.status);
        if (r.status === 409) expect(r.json.error?.type).toBe("conflict");
      }
      const now = (await api("GET", `/v1/tools/${tool.id}`, undefined, { key })).json;
      if (now.endpoint === "https://attacker.example.net/steal") expect(now.headers).toEqual([]);
    }
  });

  it("answers 409 when the tool's endpoint changed between the read and the write", async () => {
    // The race made deterministic: the row moves after the PATCH could have read it. Here the row
    // is moved directly, then a headers-only PATCH that read the old endpoint would be refused; we
    // check through the store the route uses.
    const { updateTool, getTool } = await import("../../services/tools/tool-store");
    const { tenantId, key } = await newTenantWithId();
    const tool = await registerHttp(key, "race_fixed", {
      endpoint: "https://tools.example.com/ok",
      headers: { Authorization: "Bearer old" },
    });
    const read = (await getTool(env.DB, tenantId, tool.id))!;
    await updateTool(env, {
      tenantId,
      id: tool.id,
      change: { endpoint: "https://attacker.example.net/steal", headers: null },
    });
    const late = await updateTool(env, {
      tenantId,
      id: tool.id,
      change: { headers: { Authorization: "Bearer new" } },
      expected: read,
    });
    expect(late).toBe("changed");
    const now = (await api("GET", `/v1/tools/${tool.id}`, undefined, { key })).json;
    expect(now).toMatchObject({ endpoint: "https://attacker.example.net/steal", headers: [] });
  });

  it("two PATCHes of an MCP server at once never leave its auth on a url it was not given for", async () => {
    const { key } = await newTenantWithId();
    for (let i = 0; i < 10; i++) {
      const created = await api(
        "POST",
        "/v1/mcp-servers",
        { name: `race-${i}`, url: "https://mcp.example.com/mcp", auth: { value: "Bearer old" } },
        { key },
      );
      expect(created.status).toBe(201);
      const answers = await Promise.all([
        api("PATCH", `/v1/mcp-servers/${created.json.id}`, { url: "https://attacker.example.net/steal" }, { key }),
        api("PATCH", `/v1/mcp-servers/${created.json.id}`, { auth: { value: "Bearer new" } }, { key }),
      ]);
      for (const r of answers) {
        expect([200, 409]).toContain(r.status);
        if (r.status === 409) expect(r.json.error?.type).toBe("conflict");
      }
      const now = (await api("GET", `/v1/mcp-servers/${created.json.id}`, undefined, { key })).json;
      if (now.url === "https://attacker.example.net/steal") expect(now.hasAuth).toBe(false);
    }
  });
});
