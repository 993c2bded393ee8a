// A D1 binding whose every session started from a bookmark reads no rows of one table: a read
// replica that has not seen them yet. Sessions at the primary (first-primary, first-unconstrained,
// none named) and the bare binding read everything, so a test shows which reads went where.

/** `real`, with reads of `table` (select … from "<table>" where …) empty in bookmark-started sessions. */
export function laggingReplica(real: D1Database, table: string): D1Database {
  const hidden = new RegExp(`^select .* from "${table}" where`);
  return new Proxy(real, {
    get(target, prop) {
      if (prop !== "withSession") return Reflect.get(target, prop).bind(target);
      return (start?: string) => {
        const session = target.withSession(start);
        if (start === "first-primary" || start === "first-unconstrained" || start === undefined) return session;
        return new Proxy(session, {
          get(s, p) {
            if (p !== "prepare") return Reflect.get(s, p).bind(s);
            return (q: string) => s.prepare(hidden.test(q) ? `${q} AND 0` : q);
          },
        });
      };
    },
  });
}
