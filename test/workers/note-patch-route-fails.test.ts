// A note PATCH cut short after its row was written (here: the tenant's shard route could not be
// read) leaves nothing half-written: the note keeps its old text, and search still finds it.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetRoute } from "../../services/cortex/routing";
import { app } from "../../workers/chat/app";
import { api, newTenantWithId } from "./helpers";

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

describe("a note PATCH whose shard route cannot be read", () => {
  it("answers an error and keeps the note's old text, still found by search", async () => {
    const { tenantId, key } = await newTenantWithId();
    const created = await api("POST", "/v1/memory", { text: "alpha original text" }, { key });
    expect(created.status).toBe(201);
    const id = created.json.id;
    forgetRoute(tenantId);
    const { db, state } = faultyDb(env.DB, (sql) => /cortex_shards/.test(sql));
    const res = await callWithDb(db, {
      method: "PATCH",
      path: `/v1/memory/${id}`,
      key,
      body: JSON.stringify({ text: "bravo replaced text" }),
      headers: { "content-type": "application/json" },
    });
    expect(state.failed).toHaveLength(1);
    expect(res.status).toBe(500);
    const got = await api("GET", `/v1/memory/${id}`, undefined, { key });
    expect(got.json.text).toBe("alpha original text");
    const found = await api("GET", "/v1/search?q=alpha", undefined, { key });
    expect(found.json.data.map((h) => h.id)).toContain(id);
    const bravo = await api("GET", "/v1/search?q=bravo", undefined, { key });
    expect(bravo.json.data).toEqual([]);
  });
});
