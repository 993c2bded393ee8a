// A spy on a cortex shard's binding (for tests that check where read sessions start against the
// bookmarks the shard's primary writes answered): cortex-sessions, cortex-write-bookmarks,
// regenerate-note-bookmark.
import { env } from "cloudflare:workers";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { laterBookmark } from "../../services/cortex/shard";
import { createConversation, inConversation, newTenantWithId } from "./helpers";

export type Step = { session: string } | { written: string };

/** The shard's binding, logging in order how each session starts and the bookmarks its primary writes answered. */
export function spyShard(real: D1Database) {
  const log: Step[] = [];
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "withSession")
        return (start?: string) => {
          log.push({ session: start ?? "" });
          const session = target.withSession(start);
          return new Proxy(session, {
            get(inner, p) {
              if (p === "getBookmark")
                return () => {
                  const b = inner.getBookmark();
                  if (b && start === "first-primary") log.push({ written: b });
                  return b;
                };
              const value = Reflect.get(inner, p);
              return typeof value === "function" ? value.bind(inner) : value;
            },
          });
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  /** The bookmarks the primary's writes answered, from the log's entry `from` on. */
  const written = (from = 0) => log.slice(from).flatMap((s) => ("written" in s ? [s.written] : []));
  /** How each session started (its bookmark, or "first-primary" / "first-unconstrained"), from entry `from` on. */
  const sessions = (from = 0) => log.slice(from).flatMap((s) => ("session" in s ? [s.session] : []));
  return { db, log, written, sessions };
}

export const latest = (bookmarks: string[]) => bookmarks.reduce<string>((a, b) => laterBookmark(a, b) ?? "", "");

/** A new tenant's conversation whose object writes and reads its cortex shard through a spy. */
export async function spiedConversation() {
  const { tenantId, key } = await newTenantWithId();
  const shard = (await routeOf(env as Env, tenantId)).shard;
  const spy = spyShard(shardDatabase(env, shard));
  const id = await createConversation(undefined, key);
  await inConversation(id, async (instance) => {
    instance.env = { ...instance.env, [shard]: spy.db };
  });
  return { key, id, spy };
}
