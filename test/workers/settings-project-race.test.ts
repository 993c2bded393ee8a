// The tenant's settings (PUT /v1/settings) and a project's (POST /v1/projects, PATCH
// /v1/projects/:id) are each checked against the other before they are written. Each change lands
// here inside the other's window, between its check and its write: the one written second must be
// refused (its check made again over what the first wrote), so the tenant never ends with a project
// that can start no conversation. Each alone is accepted: a project's `compactTargetRatio: 0.6`
// over the default trigger (0.75), the tenant's `compactTriggerRatio: 0.55` over the default target
// (0.5); together the target reaches the trigger. Projects' settings are never checked against each
// other: another project's written inside a project's window never makes it check again.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";

const TENANT = { compactTriggerRatio: 0.55 };
const PROJECT = { compactTargetRatio: 0.6 };

/**
 * The worker's env whose DB (and its request sessions) runs `before` just ahead of a statement
 * whose SQL `matches`, run alone or in a batch: once, or ahead of every one (`every`).
 */
function envHolding(matches: RegExp, opts: { before: () => Promise<unknown>; every?: boolean }): Env {
  let fired = false;
  const watched = new WeakSet<object>();
  const hold = async () => {
    if (fired && !opts.every) return;
    fired = true;
    await opts.before();
  };
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (prop === "bind") return (...a: unknown[]) => wrap(target.bind(...a), sql);
        if (watched.has(proxy) && ["run", "all", "raw", "first"].includes(String(prop)))
          return async (...a: unknown[]) => {
            await hold();
            return Reflect.apply(v, target, a);
          };
        return v.bind(target);
      },
    });
    if (matches.test(sql)) watched.add(proxy);
    return proxy;
  };
  // A request's statements go through its D1 session (workers/chat/d1-session.ts): those are held too.
  const holdingDb = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, prop) {
        if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
        if (prop === "batch")
          return async (stmts: D1PreparedStatement[]) => {
            if (stmts.some((s) => watched.has(s))) await hold();
            return target.batch(stmts);
          };
        if (prop === "withSession" && "withSession" in target)
          return (start?: string) => holdingDb(target.withSession(start));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  const db = holdingDb(env.DB);
  return new Proxy(env as Env, { get: (t, p) => (p === "DB" ? db : Reflect.get(t, p)) });
}

/** A request through the chat app on `on` (a held env), its background work awaited. */
async function callOn(on: Env, request: { method: string; path: string; key: string; body: unknown }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${request.path}`, {
      method: request.method,
      headers: { authorization: `Bearer ${request.key}`, "content-type": "application/json" },
      body: JSON.stringify(request.body),
    }),
    on,
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text };
}

const UPDATE_PROJECTS = /^\s*update "projects"/i;
const INSERT_PROJECTS = /^\s*insert into "projects"/i;
const UPDATE_TENANTS = /^\s*update "tenants"/i;

/** Whether a conversation can be made in the project now (what the tenant must never lose). */
const startsConversation = async (key: string, projectId: string) =>
  (await api("POST", "/v1/conversations", { projectId }, { key })).status;

describe("tenant settings and a project's settings changed at once", () => {
  it("a tenant PUT inside a project PATCH's window: the PATCH is checked again and refused", async () => {
    const key = await newTenant();
    const pid = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id as string;
    let put: { status: number } | undefined;
    const held = envHolding(UPDATE_PROJECTS, {
      before: async () => {
        put = await api("PUT", "/v1/settings", { settings: TENANT }, { key });
      },
    });
    const patch = await callOn(held, {
      method: "PATCH",
      path: `/v1/projects/${pid}`,
      key,
      body: { settings: PROJECT },
    });
    expect(put?.status).toBe(200);
    expect(patch.status).toBe(400);
    expect(patch.text).toContain("settings.compactTargetRatio");
    expect((await api("GET", `/v1/projects/${pid}`, undefined, { key })).json.settings).toEqual({});
    expect(await startsConversation(key, pid)).toBe(201);
  });

  it("a tenant PUT inside a project POST's window: the POST is checked again and refused", async () => {
    const key = await newTenant();
    let put: { status: number } | undefined;
    const held = envHolding(INSERT_PROJECTS, {
      before: async () => {
        put = await api("PUT", "/v1/settings", { settings: TENANT }, { key });
      },
    });
    const post = await callOn(held, {
      method: "POST",
      path: "/v1/projects",
      key,
      body: { name: "p", settings: PROJECT },
    });
    expect(put?.status).toBe(200);
    expect(post.status).toBe(400);
    expect(post.text).toContain("settings.compactTargetRatio");
    expect((await api("GET", "/v1/projects", undefined, { key })).json.data).toEqual([]);
  });

  it("a project PATCH inside a tenant PUT's window: the PUT is checked again and refused, naming the project", async () => {
    const key = await newTenant();
    const pid = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id as string;
    let patch: { status: number } | undefined;
    const held = envHolding(UPDATE_TENANTS, {
      before: async () => {
        patch = await api("PATCH", `/v1/projects/${pid}`, { settings: PROJECT }, { key });
      },
    });
    const put = await callOn(held, { method: "PUT", path: "/v1/settings", key, body: { settings: TENANT } });
    expect(patch?.status).toBe(200);
    expect(put.status).toBe(400);
    expect(put.text).toContain(`project ${pid}`);
    expect((await api("GET", "/v1/settings", undefined, { key })).json.settings).toEqual({});
    expect(await startsConversation(key, pid)).toBe(201);
  });

  it("a project POST inside a tenant PUT's window: the PUT is checked again and refused, naming the project", async () => {
    const key = await newTenant();
    let post: { status: number; json: { id?: string } } | undefined;
    const held = envHolding(UPDATE_TENANTS, {
      before: async () => {
        post = await api("POST", "/v1/projects", { name: "p", settings: PROJECT }, { key });
      },
    });
    const put = await callOn(held, { method: "PUT", path: "/v1/settings", key, body: { settings: TENANT } });
    expect(post?.status).toBe(201);
    const pid = post?.json.id as string;
    expect(put.status).toBe(400);
    expect(put.text).toContain(`project ${pid}`);
    expect((await api("GET", "/v1/settings", undefined, { key })).json.settings).toEqual({});
    expect(await startsConversation(key, pid)).toBe(201);
  });

  it("a project write that finds the tenant's settings changed at every try is a 409 to send again, and writes nothing", async () => {
    const key = await newTenant();
    const pid = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id as string;
    let n = 0;
    // Ahead of each of the PATCH's writes the tenant's settings change (harmless on their own).
    const held = envHolding(UPDATE_PROJECTS, {
      every: true,
      before: () => api("PUT", "/v1/settings", { settings: { charsPerToken: 3 + (n++ % 2) } }, { key }),
    });
    const patch = await callOn(held, {
      method: "PATCH",
      path: `/v1/projects/${pid}`,
      key,
      body: { settings: PROJECT },
    });
    expect(patch.status).toBe(409);
    expect(patch.text).toContain("send it again");
    expect((await api("GET", `/v1/projects/${pid}`, undefined, { key })).json.settings).toEqual({});
  });

  it("a tenant PUT that finds projects' settings changed at every try is a 409 to send again, and writes nothing", async () => {
    const key = await newTenant();
    const other = (await api("POST", "/v1/projects", { name: "other" }, { key })).json.id as string;
    let n = 0;
    // Ahead of each of the PUT's writes a project's settings change (harmless on their own).
    const held = envHolding(UPDATE_TENANTS, {
      every: true,
      before: () => api("PATCH", `/v1/projects/${other}`, { settings: { charsPerToken: 3 + (n++ % 2) } }, { key }),
    });
    const put = await callOn(held, { method: "PUT", path: "/v1/settings", key, body: { settings: TENANT } });
    expect(put.status).toBe(409);
    expect(put.text).toContain("send it again");
    expect((await api("GET", "/v1/settings", undefined, { key })).json.settings).toEqual({});
  });

  it("other projects' settings written ahead of each of a project PATCH's writes: all of them land", async () => {
    const key = await newTenant();
    const pid = (await api("POST", "/v1/projects", { name: "p" }, { key })).json.id as string;
    const other = (await api("POST", "/v1/projects", { name: "other" }, { key })).json.id as string;
    const inside: { status: number }[] = [];
    let n = 0;
    // Ahead of each of the PATCH's writes another project's settings change, or a project with settings is made.
    const held = envHolding(UPDATE_PROJECTS, {
      every: true,
      before: async () => {
        inside.push(
          n++ % 2
            ? await api("POST", "/v1/projects", { name: `new${n}`, settings: { charsPerToken: 5 } }, { key })
            : await api("PATCH", `/v1/projects/${other}`, { settings: { charsPerToken: 3 } }, { key }),
        );
      },
    });
    const patch = await callOn(held, {
      method: "PATCH",
      path: `/v1/projects/${pid}`,
      key,
      body: { settings: PROJECT },
    });
    expect(patch.status, patch.text).toBe(200);
    expect(inside.length).toBeGreaterThan(0);
    expect(inside.map((r) => r.status)).toEqual(inside.map((_, i) => (i % 2 ? 201 : 200)));
    expect((await api("GET", `/v1/projects/${pid}`, undefined, { key })).json.settings).toEqual(PROJECT);
    expect((await api("GET", `/v1/projects/${other}`, undefined, { key })).json.settings).toEqual({ charsPerToken: 3 });
  });

  it("another project's settings written ahead of each of a project POST's writes: both land", async () => {
    const key = await newTenant();
    const other = (await api("POST", "/v1/projects", { name: "other" }, { key })).json.id as string;
    const inside: { status: number }[] = [];
    let n = 0;
    const held = envHolding(INSERT_PROJECTS, {
      every: true,
      before: async () => {
        inside.push(
          await api("PATCH", `/v1/projects/${other}`, { settings: { charsPerToken: 3 + (n++ % 2) } }, { key }),
        );
      },
    });
    const post = await callOn(held, { method: "POST", path: "/v1/projects", key, body: { name: "p", settings: {} } });
    expect(post.status, post.text).toBe(201);
    expect(inside.map((r) => r.status)).toEqual(inside.map(() => 200));
  });

  it("each change alone, and a name-only PATCH during a tenant PUT, are accepted", async () => {
    const key = await newTenant();
    const pid = (await api("POST", "/v1/projects", { name: "p", settings: PROJECT }, { key })).json.id as string;
    const held = envHolding(UPDATE_TENANTS, {
      before: () => api("PATCH", `/v1/projects/${pid}`, { name: "renamed" }, { key }),
    });
    const put = await callOn(held, {
      method: "PUT",
      path: "/v1/settings",
      key,
      body: { settings: { charsPerToken: 3 } },
    });
    expect(put.status).toBe(200);
    expect((await api("GET", `/v1/projects/${pid}`, undefined, { key })).json).toMatchObject({
      name: "renamed",
      settings: PROJECT,
    });
    expect(await startsConversation(key, pid)).toBe(201);
  });
});
