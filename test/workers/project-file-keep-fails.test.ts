// A project file whose final keep check fails (the statement that counts the project's files and
// marks it changed) leaves nothing behind: no file listed, none in its conversations' prompt.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";

/** A D1 proxy that fails the next `times` statements (or batches) whose SQL matches `when`. */
function faultyDb(real: D1Database, when: (sql: string) => boolean, times = 1) {
  const state = { left: times, failed: [] as string[] };
  const wrapStmt = (s: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(s, {
      get(t, prop) {
        const v = Reflect.get(t, prop);
        if (prop === "bind") return (...a: unknown[]) => wrapStmt(t.bind(...a), sql);
        if (typeof prop === "string" && ["run", "all", "first", "raw"].includes(prop))
          return (...a: unknown[]) => {
            if (state.left > 0 && when(sql)) {
              state.left--;
              state.failed.push(sql);
              return Promise.reject(new Error("D1_ERROR: injected fault"));
            }
            return (v as (...x: unknown[]) => unknown).apply(t, a);
          };
        return typeof v === "function" ? v.bind(t) : v;
      },
    });
  const sqlOf = new WeakMap<object, string>();
  const prep = (p: (q: string) => D1PreparedStatement) => (q: string) => {
    const s = wrapStmt(p(q), q);
    sqlOf.set(s, q);
    return s;
  };
  const batchOf = (b: (s: D1PreparedStatement[]) => Promise<unknown>) => (s: D1PreparedStatement[]) => {
    const sqls = s.map((x) => sqlOf.get(x) ?? "");
    if (state.left > 0 && sqls.some(when)) {
      state.left--;
      state.failed.push(sqls.join(" ; "));
      return Promise.reject(new Error("D1_ERROR: injected fault"));
    }
    return b(s);
  };
  const db = {
    prepare: prep((q) => real.prepare(q)),
    batch: batchOf((s) => real.batch(s)),
    exec: (q: string) => real.exec(q),
    dump: () => real.dump(),
    withSession: (start?: string) => {
      const session = real.withSession(start);
      return {
        prepare: prep((q) => session.prepare(q)),
        batch: batchOf((s) => session.batch(s)),
        getBookmark: () => session.getBookmark(),
      };
    },
  } as unknown as D1Database;
  return { db, state };
}

/** One request to the chat app with `db` in place of D1. */
async function callWithDb(
  db: D1Database,
  req: { method: string; path: string; key: string; body?: BodyInit; headers?: Record<string, string> },
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, {
      method: req.method,
      headers: { authorization: `Bearer ${req.key}`, ...req.headers },
      body: req.body,
    }),
    { ...env, DB: db } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

describe("a project file upload whose keep check fails", () => {
  it("answers an error and leaves no file listed nor in the prompt", async () => {
    const key = await newTenant();
    const p = await api("POST", "/v1/projects", { name: "Faulty" }, { key });
    expect(p.status).toBe(201);
    const projectId = p.json.id;
    const body = "requirement R-17\n";
    const { db, state } = faultyDb(env.DB, (sql) => /^update "projects"/i.test(sql) && /count\(/i.test(sql));
    const res = await callWithDb(db, {
      method: "POST",
      path: `/v1/projects/${projectId}/files?name=spec.txt`,
      key,
      body,
      headers: { "content-type": "text/plain", "content-length": String(new TextEncoder().encode(body).length) },
    });
    expect(state.failed).toHaveLength(1);
    expect(res.status).toBeGreaterThanOrEqual(500);
    const files = await api("GET", `/v1/projects/${projectId}/files`, undefined, { key });
    expect(files.status).toBe(200);
    expect(files.json.data).toEqual([]);
    const c = await api("POST", "/v1/conversations", { title: "t", projectId }, { key });
    expect(c.status).toBe(201);
    const system = (await api("GET", `/v1/conversations/${c.json.id}/replay`, undefined, { key })).json.system[0].text;
    expect(system).not.toContain('name="spec.txt"');
    // The project still takes a file afterwards.
    const again = await api("POST", `/v1/projects/${projectId}/files?name=spec.txt`, body, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(again.status).toBe(201);
    const after = await api("GET", `/v1/projects/${projectId}/files`, undefined, { key });
    expect(after.json.data.map((f) => f.name)).toEqual(["spec.txt"]);
  });
});
