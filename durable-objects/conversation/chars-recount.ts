// The stored weight of a message (the `chars` column, summed by conversation-store.ts charsAfter)
// is set once, at insert. When the weighing changes for a kind of block, the rows written before
// are weighed again, once per object, before their sum is first read (replay-cache.ts).
import type { StoredMessage } from "../../core/types";
import type { ObjectScope } from "./object-scope";

/**
 * kv key of the recount of fetched documents: since core/render.ts messageChars weighs a fetched
 * PDF by what the API counts of it, not by its base64, rows holding a web fetch result stored
 * before it weigh up to 50 times too much.
 */
export const FETCHED_RECOUNT_KEY = "fetched_chars_recount";
const FETCH_RESULT = `"type":"web_fetch_tool_result"`;

/**
 * Weighs again, with `chars` (what insert weighs with), each message whose stored JSON holds a web
 * fetch result: in its content column or, kept in parts, in a part or across two. A row weighing 0
 * (superseded, or a sub-agent's) stays 0. Recorded in kv: done once.
 */
export function recountFetchedChars(scope: Pick<ObjectScope, "ctx" | "store">, chars: (m: StoredMessage) => number) {
  const sql = scope.ctx.storage.sql;
  if (sql.exec(`SELECT 1 FROM kv WHERE key = ?`, FETCHED_RECOUNT_KEY).toArray().length) return;
  const next = `(SELECT substr(q.body, 1, ${FETCH_RESULT.length}) FROM message_parts q WHERE q.seq = p.seq AND q.part = p.part + 1)`;
  const inParts = `EXISTS (SELECT 1 FROM message_parts p WHERE p.seq = messages.seq AND instr(p.body || COALESCE(${next}, ''), ?) > 0)`;
  const seqs = sql
    .exec<{ seq: number }>(
      `SELECT seq FROM messages WHERE chars > 0 AND (instr(content, ?) > 0 OR (content = '' AND ${inParts}))`,
      FETCH_RESULT,
      FETCH_RESULT,
    )
    .toArray();
  for (const { seq } of seqs) {
    for (const m of scope.store.range(seq, seq)) sql.exec(`UPDATE messages SET chars = ? WHERE seq = ?`, chars(m), seq);
  }
  sql.exec(`INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)`, FETCHED_RECOUNT_KEY, "1");
}
