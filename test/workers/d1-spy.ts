// A D1 binding that records how it is used: statements issued directly on the binding and through
// sessions (with each session's constraint or bookmark). Wraps the real binding; test-only.
export interface D1Spy {
  db: D1Database;
  /** Statements prepared on the binding itself, outside any session. */
  direct: string[];
  /** Statements prepared through a session. */
  inSession: string[];
  /** What each session was started with. */
  sessions: string[];
}

export function spyD1(real: D1Database): D1Spy {
  const spy: D1Spy = { direct: [], inSession: [], sessions: [], db: undefined as unknown as D1Database };
  spy.db = {
    prepare: (q: string) => (spy.direct.push(q), real.prepare(q)),
    batch: (s: D1PreparedStatement[]) => real.batch(s),
    exec: (q: string) => (spy.direct.push(q), real.exec(q)),
    dump: () => real.dump(),
    withSession: (start?: string) => {
      spy.sessions.push(start ?? "");
      const session = real.withSession(start);
      return { prepare: (q: string) => (spy.inSession.push(q), session.prepare(q)), batch: (s: D1PreparedStatement[]) => session.batch(s), getBookmark: () => session.getBookmark() } as D1DatabaseSession;
    },
  } as D1Database;
  return spy;
}

export const statementCount = (spy: D1Spy) => spy.direct.length + spy.inSession.length;
