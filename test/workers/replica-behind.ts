// A cortex shard's binding whose read sessions started at an early bookmark read a replica that sits
// there: it has not seen the rows of one kind written later (a PDF's pages, a fold's episode). Local
// D1 has only the primary, so this is how a test shows that a search which starts its session too
// early misses what was just written, and that one which starts late enough finds it.

/** Where a search (a statement that joins the index's matches to their rows) ran its session from. */
export interface SearchStart {
  /** How the session started: its bookmark, or "first-primary" / "first-unconstrained". */
  start: string;
}

/**
 * `real`, whose sessions started at a bookmark no later than `behind()` leave out the rows of `kind`
 * (in searches and in page counts): a replica at that bookmark, which the rows written after it have
 * not reached. Sessions at the primary, anywhere ("first-unconstrained": here a replica that has
 * caught up) or at a later bookmark read everything. `onSearch` hears every search's session start.
 */
export function replicaBehind(
  real: D1Database,
  opts: { behind: () => string; kind: "page" | "episode"; onSearch?: (at: SearchStart) => void },
): D1Database {
  const { behind, kind, onSearch } = opts;
  const hide = (q: string) =>
    q
      .replaceAll("JOIN cortex_docs d ON", `JOIN (SELECT rowid, * FROM cortex_docs WHERE kind != '${kind}') d ON`)
      .replaceAll(`AND kind = '${kind}'`, `AND kind = '${kind}' AND 0`);
  const bind = <T extends object>(target: T, prop: string | symbol) => {
    const value = Reflect.get(target, prop);
    return typeof value === "function" ? value.bind(target) : value;
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop !== "withSession") return bind(target, prop);
      return (start?: string) => {
        const session = target.withSession(start);
        const early = !!start && !start.startsWith("first-") && start <= behind();
        return new Proxy(session, {
          get(s, p) {
            if (p !== "prepare") return bind(s, p);
            return (q: string) => {
              if (q.includes("JOIN cortex_docs d ON")) onSearch?.({ start: start ?? "" });
              return s.prepare(early ? hide(q) : q);
            };
          },
        });
      };
    },
  });
}
