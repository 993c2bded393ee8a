// A project deleted between the route's check of `projectId` and the insert of a tool or MCP
// server scoped to it: the insert itself requires the project, so no orphan row (with its sealed
// secret, counted against the tenant's caps, seen by no conversation) is left behind. A conversation
// created while its project is deleted likewise: the read of the project's settings finds it gone,
// and the create is refused as one sent a moment later is, rather than made without those settings.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { deleteProject } from "../../services/projects";
import { app } from "../../workers/chat/app";
import type { ApiError } from "../route-types";
import { envRunningBefore } from "./d1-gates";
import { api, newTenantWithId } from "./helpers";

/**
 * env whose DB (and its request sessions) runs `before` once, just ahead of the first batch holding a
 * statement whose SQL `matches` (envRunningBefore watches statements run alone).
 */
function envBeforeBatch(matches: RegExp, before: () => Promise<unknown>): Env {
  let fired = false;
  const sqlOf = new WeakMap<object, string>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop);
        if (prop === "bind") return (...a: unknown[]) => wrap(target.bind(...a), sql);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    sqlOf.set(proxy, sql);
    return proxy;
  };
  const watchedDb = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, prop) {
        if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
        if (prop === "batch")
          return async (stmts: D1PreparedStatement[]) => {
            if (!fired && stmts.some((s) => matches.test(sqlOf.get(s) ?? ""))) {
              fired = true;
              await before();
            }
            return target.batch(stmts);
          };
        if (prop === "withSession" && "withSession" in target)
          return (start?: string) => watchedDb(target.withSession(start));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  const db = watchedDb(env.DB);
  return new Proxy(env as Env, { get: (t, p) => (p === "DB" ? db : Reflect.get(t, p)) });
}

/** env whose DB runs `before` once, just ahead of the first statement that `verb`s `table`. */
const deletingBefore = (verb: "insert into" | "update", table: string, before: () => Promise<unknown>): Env =>
  envRunningBefore(new RegExp(`^\\s*${verb} "${table}"`, "i"), before);

async function racedCreate(path: "/v1/tools" | "/v1/mcp-servers", table: string, body: Record<string, unknown>) {
  const { tenantId, key } = await newTenantWithId();
  const project = (await api("POST", "/v1/projects", { name: "doomed" }, { key })).json;
  const raced = deletingBefore("insert into", table, () => deleteProject(env as Env, tenantId, project.id));
  const res = await app.request(
    path,
    {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...body, projectId: project.id }),
    },
    raced,
  );
  const rows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?`)
    .bind(tenantId)
    .first<{ n: number }>();
  return {
    res,
    rows: rows!.n,
    projectGone: (await api("GET", `/v1/projects/${project.id}`, undefined, { key })).status,
  };
}

describe("a tool or MCP server registered while its project is deleted", () => {
  it("leaves no tool row: the insert requires the project and the answer names projectId", async () => {
    const { res, rows, projectGone } = await racedCreate("/v1/tools", "tools", {
      kind: "client",
      name: "orphan_probe",
      description: "Registered while its project goes.",
      inputSchema: { type: "object", properties: {} },
    });
    expect(projectGone).toBe(404);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: ApiError }).error.message).toBe("projectId: no such project");
    expect(rows).toBe(0);
  });

  it("leaves no MCP server row (nor its sealed auth): the insert requires the project", async () => {
    const { res, rows, projectGone } = await racedCreate("/v1/mcp-servers", "mcp_servers", {
      name: "orphan-probe",
      url: `http://127.0.0.1:${inject("mcpFixturePort")}/mcp`,
      auth: { value: "Bearer orphaned-secret" },
    });
    expect(projectGone).toBe(404);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: ApiError }).error.message).toBe("projectId: no such project");
    expect(rows).toBe(0);
  });
});

describe("an MCP server moved into a project while that project is deleted", () => {
  it("is not moved: the update requires the project and the answer names projectId", async () => {
    const { tenantId, key } = await newTenantWithId();
    const server = (
      await api(
        "POST",
        "/v1/mcp-servers",
        { name: "mover", url: `http://127.0.0.1:${inject("mcpFixturePort")}/mcp` },
        { key },
      )
    ).json;
    const project = (await api("POST", "/v1/projects", { name: "doomed" }, { key })).json;
    const raced = deletingBefore("update", "mcp_servers", () => deleteProject(env as Env, tenantId, project.id));
    const res = await app.request(
      `/v1/mcp-servers/${server.id}`,
      {
        method: "PATCH",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ projectId: project.id }),
      },
      raced,
    );
    expect((await api("GET", `/v1/projects/${project.id}`, undefined, { key })).status).toBe(404);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: ApiError }).error.message).toBe("projectId: no such project");
    // Still the tenant's, tenant-wide, as before the PATCH.
    expect((await api("GET", `/v1/mcp-servers/${server.id}`, undefined, { key })).json.projectId).toBeNull();
  });
});

describe("a conversation created while its project is deleted", () => {
  /** POST /v1/conversations in a project deleted just before the create reads the project's settings. */
  async function racedConversation(headers: Record<string, string> = {}) {
    const { tenantId, key } = await newTenantWithId();
    const project = (
      await api("POST", "/v1/projects", { name: "doomed", settings: { model: "claude-haiku-4-5" } }, { key })
    ).json;
    const raced = envBeforeBatch(/select "settings" from "projects"/i, () =>
      deleteProject(env as Env, tenantId, project.id),
    );
    const res = await app.request(
      "/v1/conversations",
      {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ title: "in project", projectId: project.id }),
      },
      raced,
    );
    return { key, project, res };
  }

  it("is refused `projectId: no such project`, as the same create a moment later, and nothing is listed", async () => {
    const { key, project, res } = await racedConversation();
    expect((await api("GET", `/v1/projects/${project.id}`, undefined, { key })).status).toBe(404);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: ApiError }).error.message).toBe("projectId: no such project");
    const later = await api("POST", "/v1/conversations", { title: "after", projectId: project.id }, { key });
    expect(later.status).toBe(400);
    expect(later.json).toMatchObject({ error: { message: "projectId: no such project" } });
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });

  it("with an Idempotency-Key: refused, and the key is left free (a retry is refused again, not replayed)", async () => {
    const headers = { "idempotency-key": "raced-project-create" };
    const { key, project, res } = await racedConversation(headers);
    expect(res.status).toBe(400);
    const again = await api(
      "POST",
      "/v1/conversations",
      { title: "in project", projectId: project.id },
      { key, headers },
    );
    expect(again.status).toBe(400);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });
});
