// A D1 binding that fails chosen statements, and one request to the chat app with it in place of
// D1: for tests that a write cut short half-way leaves nothing half-written
// (note-patch-route-fails, project-file-keep-fails).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { app } from "../../workers/chat/app";

/** A D1 proxy that fails the next `times` statements (or batches) whose SQL matches `when`. */
export function faultyDb(real: D1Database, when: (sql: string) => boolean, times = 1) {
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
export async function callWithDb(
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
