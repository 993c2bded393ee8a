// Bulk removal for explicit deletes: R2 objects under a prefix and D1 rows matching a filter, in
// bounded steps, so a conversation of any age is removed without one oversized call.
import { withRetry } from "./record/retry";

/** R2 deletes at most 1000 keys per call. */
const R2_DELETE_BATCH = 1000;
/** Rows per D1 delete statement: each row also fires the cortex's FTS trigger. */
const D1_DELETE_CHUNK = 500;

/** Deletes every object under `prefix` (listed page by page with the cursor); returns how many. */
export async function deleteR2Prefix(bucket: R2Bucket, prefix: string): Promise<number> {
  let removed = 0;
  let cursor: string | undefined;
  do {
    const page = await withRetry("purge listing", () => bucket.list({ prefix, cursor, limit: R2_DELETE_BATCH }));
    const keys = page.objects.map((o) => o.key);
    if (keys.length) await withRetry("purge delete", () => bucket.delete(keys));
    removed += keys.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return removed;
}

/**
 * Deletes the rows of `table` matching `where` a chunk at a time until none is left. `table` and
 * `where` are code constants, never input; values travel as bound parameters.
 */
export async function deleteRowsInChunks(
  db: Pick<D1Database, "prepare">,
  rows: { table: string; where: string; params: unknown[] },
): Promise<number> {
  const { table, where, params } = rows;
  let removed = 0;
  for (;;) {
    const res = await db
      .prepare(
        `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT ${D1_DELETE_CHUNK})`,
      )
      .bind(...params)
      .run();
    const changes = res.meta.changes ?? 0;
    removed += changes;
    if (changes === 0) return removed;
  }
}
