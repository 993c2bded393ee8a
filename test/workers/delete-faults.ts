// What the delete-repeat tests share: the app's bindings with faults injected (a D1 that runs a
// hook before each statement, an R2 whose deletes fail for a moment), and a DELETE sent through
// the app with them, to cut a delete short where a test wants it.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { app } from "../../workers/chat/app";

const TERMINAL = new Set(["run", "all", "first", "raw"]);

/** D1 (the app's, or a cortex shard) that runs `onStatement(sql)` before each statement. */
export function watchedDb(real: D1Database, onStatement: (sql: string) => Promise<void>): D1Database {
  const wrap = (s: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(s, {
      get(t, prop) {
        const v: unknown = Reflect.get(t, prop);
        if (prop === "bind") return (...a: unknown[]) => wrap(t.bind(...a), sql);
        if (typeof prop !== "string" || !TERMINAL.has(prop) || typeof v !== "function")
          return typeof v === "function" ? v.bind(t) : v;
        return async (...a: unknown[]) => {
          await onStatement(sql);
          return v.apply(t, a);
        };
      },
    });
  const session = (s: D1DatabaseSession): D1DatabaseSession =>
    new Proxy(s, {
      get(st, p) {
        if (p === "prepare") return (q: string) => wrap(st.prepare(q), q);
        const v: unknown = Reflect.get(st, p);
        return typeof v === "function" ? v.bind(st) : v;
      },
    });
  return new Proxy(real, {
    get(t, prop) {
      if (prop === "prepare") return (q: string) => wrap(t.prepare(q), q);
      if (prop === "withSession") return (start?: string) => session(t.withSession(start));
      const v: unknown = Reflect.get(t, prop);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}

/** R2 whose deletes fail (a transient R2 outage) while `failing.on` is set. */
export function flakyBucket(failing: { on: boolean }): R2Bucket {
  return new Proxy(env.BUCKET, {
    get(t, prop) {
      if (prop === "delete")
        return async (keys: string | string[]) => {
          if (failing.on) throw new Error("injected: R2 delete failed");
          return t.delete(keys);
        };
      const v: unknown = Reflect.get(t, prop, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}

/** The first DELETE, through the app with `db` and `bucket` in place of the real bindings. */
export async function deleteThrough(opts: {
  path: string;
  key: string;
  db: D1Database;
  bucket: R2Bucket;
  shards?: Record<string, D1Database>;
}): Promise<number> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${opts.path}`, { method: "DELETE", headers: { authorization: `Bearer ${opts.key}` } }),
    { ...env, ...opts.shards, DB: opts.db, BUCKET: opts.bucket },
    ctx,
  );
  await res.text();
  await waitOnExecutionContext(ctx);
  return res.status;
}
