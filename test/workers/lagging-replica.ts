// D1 bindings whose sessions started from a bookmark read a replica that is behind: one that has
// not seen one table's rows yet (laggingReplica), or one frozen at a moment (frozenReplica). Sessions
// at the primary (first-primary, first-unconstrained, none named) and the bare binding read
// everything, so a test shows which reads went where.
import { env } from "cloudflare:workers";

/** `real`, with every statement of a bookmark-started session rewritten by `rewrite` first. */
function replicaReads(real: D1Database, rewrite: (q: string) => string): D1Database {
  return new Proxy(real, {
    get(target, prop) {
      if (prop !== "withSession") return Reflect.get(target, prop).bind(target);
      return (start?: string) => {
        const session = target.withSession(start);
        if (start === "first-primary" || start === "first-unconstrained" || start === undefined) return session;
        return new Proxy(session, {
          get(s, p) {
            if (p !== "prepare") return Reflect.get(s, p).bind(s);
            return (q: string) => s.prepare(rewrite(q));
          },
        });
      };
    },
  });
}

/** `real`, with reads of `table` (select … from "<table>" [alias] where …) empty in bookmark-started sessions. */
export function laggingReplica(real: D1Database, table: string): D1Database {
  const hidden = new RegExp(`^select .* from "${table}"( "[a-z_]+")? where`);
  return replicaReads(real, (q) => (hidden.test(q) ? `${q} AND 0` : q));
}

const copyOf = (table: string) => `${table}_frozen`;

/**
 * `real`, whose bookmark-started sessions read `table` as it stood at the last `freeze(table)`: a
 * replica that has seen nothing since (stale rows, not missing ones).
 */
export function frozenReplica(real: D1Database, table: string): D1Database {
  return replicaReads(real, (q) => (/^select /i.test(q) ? q.replaceAll(`"${table}"`, `"${copyOf(table)}"`) : q));
}

/** Takes the copy of `table` that frozenReplica's sessions read. */
export async function freeze(table: string): Promise<void> {
  await env.DB.prepare(`DROP TABLE IF EXISTS ${copyOf(table)}`).run();
  await env.DB.prepare(`CREATE TABLE ${copyOf(table)} AS SELECT * FROM ${table}`).run();
}
