// A D1 binding that records how it is used: statements issued directly on the binding and through
// sessions (with each session's constraint or bookmark), and round trips (a statement run on its
// own, or a batch). Wraps the real binding; test-only.
export interface D1Spy {
  db: D1Database;
  /** Statements prepared on the binding itself, outside any session. */
  direct: string[];
  /** Statements prepared through a session. */
  inSession: string[];
  /** What each session was started with. */
  sessions: string[];
  /** Calls that went to the database, one entry each: a statement run on its own (its SQL), or a batch (its statements' SQL joined by " ; "). */
  roundTrips: string[];
}

const RUNS = new Set(["run", "all", "first", "raw"]);

export function spyD1(real: D1Database): D1Spy {
  const spy: D1Spy = {
    direct: [],
    inSession: [],
    sessions: [],
    roundTrips: [],
    db: undefined as unknown as D1Database,
  };
  const sqlOf = new WeakMap<D1PreparedStatement, string>();
  // Statements keep working as the real ones: only their runs are recorded.
  const counted = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop === "bind") return (...args: unknown[]) => counted(target.bind(...args), sql);
        if (typeof prop === "string" && RUNS.has(prop))
          return (...args: unknown[]) => (
            spy.roundTrips.push(sql), (value as (...a: unknown[]) => unknown).apply(target, args)
          );
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    sqlOf.set(proxy, sql);
    return proxy;
  };
  const batched = (s: D1PreparedStatement[]) => spy.roundTrips.push(s.map((x) => sqlOf.get(x) ?? "?").join(" ; "));
  spy.db = {
    prepare: (q: string) => (spy.direct.push(q), counted(real.prepare(q), q)),
    batch: (s: D1PreparedStatement[]) => (batched(s), real.batch(s)),
    exec: (q: string) => (spy.direct.push(q), spy.roundTrips.push(q), real.exec(q)),
    dump: () => real.dump(),
    withSession: (start?: string) => {
      spy.sessions.push(start ?? "");
      const session = real.withSession(start);
      return {
        prepare: (q: string) => (spy.inSession.push(q), counted(session.prepare(q), q)),
        batch: (s: D1PreparedStatement[]) => (batched(s), session.batch(s)),
        getBookmark: () => session.getBookmark(),
      } as D1DatabaseSession;
    },
  } as D1Database;
  return spy;
}
