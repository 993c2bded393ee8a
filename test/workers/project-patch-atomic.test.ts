// PATCH /v1/projects/:id with both `name` and `settings` is one write: a failure of it changes
// neither (never the settings applied and the name not).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";

/** D1 (and the request's sessions) whose prepare() throws for SQL matching `fails`. */
function dbFailing(fails: RegExp): D1Database {
  const gated = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, prop) {
        if (prop === "prepare")
          return (sql: string) => {
            if (fails.test(sql)) throw new Error("D1_ERROR: injected failure");
            return target.prepare(sql);
          };
        if (prop === "withSession" && "withSession" in target)
          return (start?: string) => gated(target.withSession(start));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return gated(env.DB);
}

async function patchWith(db: D1Database, path: string, opts: { key: string; body: unknown }) {
  const ctx = createExecutionContext();
  const req = new Request(`http://chat.test${path}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${opts.key}`, "content-type": "application/json" },
    body: JSON.stringify(opts.body),
  });
  const res = await app.fetch(req, { ...env, DB: db } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res.status;
}

describe("PATCH /v1/projects/:id {name, settings}", () => {
  it("changes nothing when the write that renames fails", async () => {
    const key = await newTenant();
    const made = await api("POST", "/v1/projects", { name: "before" }, { key });
    expect(made.status).toBe(201);
    const id = made.json.id as string;
    const before = (await api("GET", `/v1/projects/${id}`, undefined, { key })).json;
    // Whatever statement writes the new name fails (with the settings in it, or on its own).
    const status = await patchWith(dbFailing(/^update "projects" set .*"name" = /), `/v1/projects/${id}`, {
      key,
      body: { name: "after", settings: { charsPerToken: 3 } },
    });
    expect(status).toBe(500);
    const after = (await api("GET", `/v1/projects/${id}`, undefined, { key })).json;
    expect(after.name).toBe("before");
    expect(after.settings).toEqual(before.settings);
    expect(after.updatedAt).toBe(before.updatedAt);
  });

  it("applies both in one PATCH, and each alone", async () => {
    const key = await newTenant();
    const id = (await api("POST", "/v1/projects", { name: "one" }, { key })).json.id as string;
    const both = await api("PATCH", `/v1/projects/${id}`, { name: "two", settings: { charsPerToken: 3 } }, { key });
    expect(both.status).toBe(200);
    expect(both.json).toMatchObject({ name: "two", settings: { charsPerToken: 3 } });
    const named = await api("PATCH", `/v1/projects/${id}`, { name: "three" }, { key });
    expect(named.json).toMatchObject({ name: "three", settings: { charsPerToken: 3 } });
    const set = await api("PATCH", `/v1/projects/${id}`, { settings: {} }, { key });
    expect(set.json).toMatchObject({ name: "three", settings: {} });
  });
});
