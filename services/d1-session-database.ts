// A D1 session seen through the D1Database interface every service takes: the request's (the
// chat worker's middleware, workers/chat/d1-session.ts) or an object's own writes at the primary
// (durable-objects/channel-do.ts), whose bookmark then tells where they reached.

/** `session` as a D1Database: its statements and batches run in the session. */
export function sessionDatabase(db: D1Database, session: D1DatabaseSession): D1Database {
  return {
    prepare: (query) => session.prepare(query),
    batch: (statements) => session.batch(statements),
    // exec and dump bypass sessions; nothing in a request uses them.
    exec: (query) => db.exec(query),
    dump: () => db.dump(),
    // A read that must see the primary (a cortex route, then cached on its word) opens its own
    // session there; any other is the session's.
    withSession: (start?: string) => (start === "first-primary" ? db.withSession("first-primary") : session),
  } as D1Database;
}
