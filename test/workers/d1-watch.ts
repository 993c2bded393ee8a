// Where a Durable Object's own D1 writes reached, for tests that a request's answered
// x-d1-bookmark covers them (d1-bookmark-elsewhere, turn-note-bookmark). Locally there is only the
// primary, so "a replica at the answered bookmark sees the write" is checked as "the answered
// bookmark is at or after the primary's position right after the object's statement".
import { runInDurableObject } from "cloudflare:test";

// An object's env is swapped on the live instance (the objects read their bindings at each use).
export interface WithEnv {
  env: Env;
}
export const inObject = runInDurableObject as unknown as <R>(
  stub: DurableObjectStub,
  fn: (instance: WithEnv) => Promise<R>,
) => Promise<R>;

/**
 * The primary's position before a probe read there. Locally (one database, no replicas) every
 * statement moves the position one step, the probe's own included, so the position it reports is
 * one past what the writes before it reached.
 */
export async function primaryNow(db: D1Database): Promise<string> {
  const s = db.withSession("first-primary");
  await s.prepare("SELECT 1").first();
  const [head, count, ...rest] = s.getBookmark()!.split("-");
  return [head, (Number.parseInt(count, 16) - 1).toString(16).padStart(count.length, "0"), ...rest].join("-");
}

/**
 * Watches an object's D1 (on its binding or through any session it opens): after each of its
 * statements (or batches) the primary's position is taken, so `reached()` is where its writes got
 * to. `only`: just the statements whose SQL it matches (no batches).
 */
export async function watchWrites(
  stub: DurableObjectStub,
  opts: { only?: RegExp } = {},
): Promise<{ reached(): string | null; stop(): Promise<void> }> {
  const { only } = opts;
  const positions: string[] = [];
  const real = await inObject(stub, async (instance) => {
    const before = instance.env;
    const db = before.DB;
    const after = async <T>(done: Promise<T>, counted: boolean): Promise<T> => {
      const out = await done;
      if (counted) positions.push(await primaryNow(db));
      return out;
    };
    const statement = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement =>
      new Proxy(stmt, {
        get(target, prop) {
          const v: unknown = Reflect.get(target, prop);
          if (typeof v !== "function") return v;
          if (prop === "bind") return (...a: unknown[]) => statement(target.bind(...a), sql);
          if (["run", "all", "raw", "first"].includes(String(prop)))
            return (...a: unknown[]) =>
              after((v as (...x: unknown[]) => Promise<unknown>).apply(target, a), !only || only.test(sql));
          return (v as (...x: unknown[]) => unknown).bind(target);
        },
      });
    const wrap = <T extends D1Database | D1DatabaseSession>(target: T): T =>
      new Proxy(target, {
        get(t, prop) {
          if (prop === "prepare") return (sql: string) => statement(t.prepare(sql), sql);
          if (prop === "batch") return (s: D1PreparedStatement[]) => after(t.batch(s), !only);
          if (prop === "withSession" && "withSession" in t) return (start?: string) => wrap(t.withSession(start));
          const v: unknown = Reflect.get(t, prop);
          return typeof v === "function" ? (v as (...x: unknown[]) => unknown).bind(t) : v;
        },
      });
    instance.env = { ...before, DB: wrap(db) };
    return before;
  });
  return {
    reached: () => positions.reduce<string | null>((max, p) => (max === null || p > max ? p : max), null),
    stop: () =>
      inObject(stub, async (instance) => {
        instance.env = real;
      }),
  };
}
