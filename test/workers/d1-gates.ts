// A D1 that lets a test land something inside a write: `before` runs once, just ahead of the first
// statement whose SQL `matches` (at its execution, after its binds), then that statement runs.
import { env } from "cloudflare:workers";

/** The worker's env whose DB (and its request sessions) runs `before` ahead of the first statement matching. */
export function envRunningBefore(matches: RegExp, before: () => Promise<unknown>): Env {
  let fired = false;
  const wrap = (stmt: D1PreparedStatement, watched: boolean): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (prop === "bind") return (...a: unknown[]) => wrap(v.apply(target, a), watched);
        if (watched && ["run", "all", "raw", "first"].includes(String(prop)))
          return async (...a: unknown[]) => {
            if (!fired) {
              fired = true;
              await before();
            }
            return v.apply(target, a);
          };
        return v.bind(target);
      },
    });
  // A request's statements go through its D1 session (workers/chat/d1-session.ts): those are wrapped too.
  const watchedDb = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, prop) {
        if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), matches.test(sql));
        if (prop === "withSession" && "withSession" in target)
          return (start?: string) => watchedDb(target.withSession(start));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  const db = watchedDb(env.DB);
  return new Proxy(env as Env, { get: (t, p) => (p === "DB" ? db : Reflect.get(t, p)) });
}
