// Mixed D1 batches: a drizzle query on a declared table beside raw SQL on an undeclared one (the
// cortex, websocket tickets), applied atomically. drizzle's own batch() cannot carry a raw sql``
// statement with parameters (its raw query has no prepared statement to bind), so both kinds go
// through D1's batch as statements: the drizzle ones as the SQL drizzle builds.

interface BuiltQuery {
  toSQL(): { sql: string; params: unknown[] };
}

/** The D1 statement for a drizzle query, to run inside `db.batch([...])`. */
export function d1Statement(db: D1Database, query: BuiltQuery): D1PreparedStatement {
  const { sql, params } = query.toSQL();
  return db.prepare(sql).bind(...params);
}

/** A write refused by a UNIQUE constraint. D1's error arrives wrapped (drizzle's query error, its cause, the driver's cause). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e; e = e instanceof Error ? e.cause : undefined)
    if (/UNIQUE constraint failed/i.test(e instanceof Error ? e.message : String(e))) return true;
  return false;
}
