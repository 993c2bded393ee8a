// /v1/tools: registering, reading, changing and deleting a tenant's tools, and every refusal a
// clear 400/409 that writes nothing. Header values are write-only.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";
import type { ApiError } from "../route-types";

const server = inject("httpToolServer");
const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const httpTool = (name: string, extra: Record<string, unknown> = {}) => ({
  kind: "http",
  name,
  description: "Looks up the weather of a city.",
  inputSchema: schema,
  endpoint: `${server}/echo`,
  ...extra,
});
const rowCount = async () => (await env.DB.prepare(`SELECT COUNT(*) AS n FROM tools`).first<{ n: number }>())!.n;

describe("/v1/tools", () => {
  it("registers, lists, reads, changes and deletes a tool, returning header names only", async () => {
    const key = await newTenant();
    const created = await api(
      "POST",
      "/v1/tools",
      httpTool("weather", { headers: { Authorization: "Bearer sk-weather-secret-1" } }),
      { key },
    );
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      kind: "http",
      name: "weather",
      projectId: null,
      endpoint: `${server}/echo`,
      headers: ["Authorization"],
      timeoutMs: 10_000,
      maxResponseBytes: 1_048_576,
      idempotent: false,
      retries: 0,
      inputSchema: schema,
    });
    expect(created.text).not.toContain("sk-weather-secret-1");
    const stored = await env.DB.prepare(`SELECT sealed_headers AS s FROM tools WHERE id = ?`)
      .bind(created.json.id)
      .first<{ s: string }>();
    expect(stored!.s).toMatch(/^v1\./);
    expect(stored!.s).not.toContain("sk-weather-secret-1");

    const client = await api(
      "POST",
      "/v1/tools",
      {
        kind: "client",
        name: "pick_file",
        description: "Asks the user to pick a file.",
        inputSchema: { type: "object" },
      },
      { key },
    );
    expect(client.status).toBe(201);
    expect(client.json).not.toHaveProperty("endpoint");

    const page1 = await api("GET", "/v1/tools?limit=1", undefined, { key });
    expect(page1.json.data.map((t) => t.name)).toEqual(["pick_file"]);
    const page2 = await api("GET", `/v1/tools?limit=1&cursor=${page1.json.next}`, undefined, { key });
    expect(page2.json.data.map((t) => t.name)).toEqual(["weather"]);
    expect(page2.json.next).toBeNull();
    expect(page1.text + page2.text).not.toContain("sk-weather-secret-1");

    const id = created.json.id;
    expect((await api("GET", `/v1/tools/${id}`, undefined, { key })).json.headers).toEqual(["Authorization"]);
    const patched = await api(
      "PATCH",
      `/v1/tools/${id}`,
      { description: "Weather now.", idempotent: true, retries: 2, headers: { "X-Api-Key": "another-secret-value" } },
      { key },
    );
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({
      description: "Weather now.",
      idempotent: true,
      retries: 2,
      headers: ["X-Api-Key"],
    });
    expect(patched.text).not.toContain("another-secret-value");
    expect((await api("PATCH", `/v1/tools/${id}`, { headers: null }, { key })).json.headers).toEqual([]);

    expect((await api("DELETE", `/v1/tools/${id}`, undefined, { key })).status).toBe(204);
    expect((await api("GET", `/v1/tools/${id}`, undefined, { key })).status).toBe(404);
    expect((await api("DELETE", `/v1/tools/${id}`, undefined, { key })).status).toBe(404);
  });

  it("keeps names unique per tenant and scope (409), and scopes a tool to a project", async () => {
    const key = await newTenant();
    expect((await api("POST", "/v1/tools", httpTool("lookup"), { key })).status).toBe(201);
    const dup = await api("POST", "/v1/tools", httpTool("lookup"), { key });
    expect(dup.status).toBe(409);
    expect(dup.json.error).toMatchObject({ type: "conflict", message: expect.stringContaining("lookup") });
    const proj = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id;
    const scoped = await api("POST", "/v1/tools", httpTool("lookup", { projectId: proj }), { key });
    expect(scoped.status).toBe(201);
    expect(scoped.json.projectId).toBe(proj);
    expect((await api("POST", "/v1/tools", httpTool("lookup", { projectId: proj }), { key })).status).toBe(409);
    const other = (await api("POST", "/v1/tools", httpTool("other"), { key })).json.id;
    expect((await api("PATCH", `/v1/tools/${other}`, { name: "lookup" }, { key })).status).toBe(409);
    // Another tenant may use the same name.
    expect((await api("POST", "/v1/tools", httpTool("lookup"), { key: await newTenant() })).status).toBe(201);
    // A project's tools go with the project.
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key })).status).toBe(204);
    expect((await api("GET", `/v1/tools/${scoped.json.id}`, undefined, { key })).status).toBe(404);
  });

  it("refuses bad registrations with a 400 naming the field, writing nothing", async () => {
    const key = await newTenant();
    const before = await rowCount();
    const cases: [unknown, RegExp][] = [
      [httpTool("has space"), /^name: /],
      [httpTool("x".repeat(65)), /^name: /],
      [httpTool("memory_search"), /name: is a built-in tool's name/],
      // A conversation with web search carries the API's own web_search beside its other tools.
      [httpTool("web_search"), /name: is a server tool's name/],
      [httpTool("mcp__srv__tool"), /name: may not start with mcp__/],
      [httpTool("t", { inputSchema: { type: "string" } }), /inputSchema: must have "type": "object"/],
      [
        httpTool("t", { inputSchema: { type: "object", properties: { a: { description: "x".repeat(17_000) } } } }),
        /inputSchema: larger than 16384 bytes/,
      ],
      [httpTool("t", { inputSchema: { type: "object", required: "a" } }), /inputSchema: "required" must be an array/],
      [httpTool("t", { endpoint: "http://example.com/hook" }), /endpoint: only https URLs are allowed/],
      [httpTool("t", { endpoint: "https://10.0.0.8/hook" }), /endpoint: private/],
      [httpTool("t", { endpoint: "https://169.254.169.254/latest" }), /endpoint: private/],
      [httpTool("t", { endpoint: "https://user:pw@example.com/" }), /endpoint: credentials/],
      [httpTool("t", { endpoint: undefined }), /endpoint: required for an http tool/],
      [httpTool("t", { timeoutMs: 60_001 }), /timeoutMs: /],
      [httpTool("t", { maxResponseBytes: 1_048_577 }), /maxResponseBytes: /],
      [httpTool("t", { retries: 4, idempotent: true }), /retries: /],
      [httpTool("t", { retries: 1 }), /retries: only an idempotent tool is retried/],
      [httpTool("t", { headers: { "Content-Type": "text/plain" } }), /headers: may not set content-type/],
      // Hop-by-hop headers workerd acts on: an Upgrade sends a bodiless websocket GET, not the POST.
      [httpTool("t", { headers: { Upgrade: "websocket" } }), /^headers: may not set .*\bupgrade\b/],
      [httpTool("t", { headers: { Connection: "close" } }), /^headers: may not set .*\bconnection\b/],
      [httpTool("t", { headers: { "transfer-encoding": "chunked" } }), /^headers: may not set .*\btransfer-encoding\b/],
      [httpTool("t", { headers: { "X-A": "line\r\nbreak" } }), /headers.X-A: no line breaks/],
      // fetch refuses a header value past U+00FF: every call would fail.
      [
        httpTool("t", { headers: { "X-A": "key 🔑" } }),
        /headers.X-A: no line breaks, control characters or characters past U\+00FF/,
      ],
      [httpTool("t", { kind: "shell" }), /^kind: /],
      [
        { kind: "client", name: "c", description: "d", inputSchema: { type: "object" }, endpoint: `${server}/echo` },
        /endpoint: only for an http tool/,
      ],
      [httpTool("t", { projectId: "proj_01J0000000000000000000000Z" }), /projectId: no such project/],
      [httpTool("t", { surprise: 1 }), /unknown field surprise/],
    ];
    for (const [body, message] of cases) {
      const r = await api("POST", "/v1/tools", body, { key });
      expect(r.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(r.json.error?.type).toBe("invalid_request");
      expect(r.json.error?.message).toMatch(message);
    }
    const id = (await api("POST", "/v1/tools", httpTool("ok"), { key })).json.id;
    const client = (
      await api(
        "POST",
        "/v1/tools",
        { kind: "client", name: "c", description: "d", inputSchema: { type: "object" } },
        { key },
      )
    ).json.id;
    for (const [path, body, message] of [
      [`/v1/tools/${id}`, {}, /give at least one field/],
      [`/v1/tools/${id}`, { endpoint: "https://192.168.1.1/" }, /endpoint: private/],
      [`/v1/tools/${id}`, { retries: 2 }, /retries: only an idempotent tool/],
      [`/v1/tools/${id}`, { kind: "client" }, /unknown field kind/],
      [`/v1/tools/${client}`, { timeoutMs: 1000 }, /timeoutMs: only for an http tool/],
    ] as const) {
      const r = await api("PATCH", path, body, { key });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error?.message).toMatch(message);
    }
    expect(await rowCount()).toBe(before + 2);
    expect((await api("GET", `/v1/tools/${id}`, undefined, { key })).json.endpoint).toBe(`${server}/echo`);
  });

  it("refuses a PATCH setting a hop-by-hop header, keeping the tool's headers", async () => {
    const key = await newTenant();
    const created = await api("POST", "/v1/tools", httpTool("hop", { headers: { "X-Api-Key": "k-secret-1" } }), {
      key,
    });
    expect(created.status).toBe(201);
    for (const [headers, message] of [
      [{ Upgrade: "websocket" }, /^headers: may not set .*\bupgrade\b/],
      [{ connection: "Upgrade" }, /^headers: may not set .*\bconnection\b/],
    ] as const) {
      const r = await api("PATCH", `/v1/tools/${created.json.id}`, { headers }, { key });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.json.error?.message).toMatch(message);
    }
    expect((await api("GET", `/v1/tools/${created.json.id}`, undefined, { key })).json.headers).toEqual(["X-Api-Key"]);
  });

  it('refuses loopback endpoints unless ALLOW_LOOPBACK_TOOLS is "true", and headers without TOOL_SECRETS_KEY (503)', async () => {
    const key = await newTenant();
    const post = (body: unknown, vars: Record<string, string | undefined>) =>
      app.request(
        "/v1/tools",
        {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        },
        { ...env, ...vars },
      );
    const before = await rowCount();
    for (const value of [undefined, "false"]) {
      const r = await post(httpTool("local"), { ALLOW_LOOPBACK_TOOLS: value });
      expect(r.status, String(value)).toBe(400);
      expect(((await r.json()) as { error: ApiError }).error.message).toMatch(/^endpoint: only https URLs are allowed/);
    }
    // Anything but "true" or "false" is a misconfiguration, named, never read as either.
    for (const value of ["1", "TRUE"]) {
      const r = await post(httpTool("local"), { ALLOW_LOOPBACK_TOOLS: value });
      expect(r.status, value).toBe(500);
      expect(((await r.json()) as { error: ApiError }).error).toMatchObject({
        type: "config_invalid",
        message: expect.stringContaining("ALLOW_LOOPBACK_TOOLS"),
      });
    }
    const noKey = await post(httpTool("sealed", { headers: { Authorization: "Bearer x-secret-value" } }), {
      TOOL_SECRETS_KEY: undefined,
    });
    expect(noKey.status).toBe(503);
    expect(((await noKey.json()) as { error: ApiError }).error).toMatchObject({
      type: "tool_secrets_not_configured",
      message: expect.stringContaining("wrangler secret put TOOL_SECRETS_KEY"),
    });
    expect(await rowCount()).toBe(before);
    // Without headers there is nothing to seal.
    expect((await post(httpTool("unsealed"), { TOOL_SECRETS_KEY: undefined })).status).toBe(201);
  });
});
