// A fetched PDF weighs its readable part plus what the API counts of it (core/render.ts
// messageChars), no longer its whole JSON with the base64. The object stores each message's weight
// once, at insert (the `chars` column): rows written before the change are weighed again, once,
// when the object first loads the tail's chars after the upgrade (chars-recount.ts).
import { describe, expect, it } from "vitest";
import { messageChars } from "../../core/render";
import type { StoredMessage } from "../../core/types";
import { FETCHED_RECOUNT_KEY } from "../../durable-objects/conversation/chars-recount";
import { replayChars } from "../../durable-objects/conversation/replay-cache";
import { api, createConversation, inConversation, send } from "./helpers";

/** The weight a row got before the change: a web fetch result's whole JSON, base64 included. */
const oldChars = (m: Pick<StoredMessage, "content">) =>
  m.content.reduce(
    (n, b) =>
      n +
      (b.type === "web_fetch_tool_result"
        ? JSON.stringify((b as { content: unknown }).content).length
        : messageChars({ content: [b] })),
    0,
  );
const isFetch = (m: StoredMessage) => m.content.some((b) => b.type === "web_fetch_tool_result");

/** A conversation whose first turn fetched a PDF, then five short turns. */
async function withFetchedPdf(): Promise<string> {
  const id = await createConversation({ serverTools: ["web_fetch"] });
  expect((await send(id, "Read the paper.\n@web-fetch https://research.example.edu/papers/tides.pdf")).status).toBe(
    200,
  );
  for (const n of [1, 2, 3, 4, 5]) expect((await send(id, `short turn ${n}`)).status).toBe(200);
  return id;
}

const charsOf = (sql: SqlStorage, seq: number) =>
  sql.exec<{ chars: number }>(`SELECT chars FROM messages WHERE seq = ?`, seq).one().chars;

describe("fetched PDF weight: stored rows recounted once after the upgrade", () => {
  it("a row with the old weight gets the new one when the object loads; unsummarizedChars is the tail's weight", async () => {
    const id = await withFetchedPdf();
    const out = await inConversation(id, async (i, state) => {
      const sql = state.storage.sql;
      const head = i.record.head!;
      const pdf = i.cache.replaySource(head).find(isFetch)!;
      // A second fetched PDF, large enough to be kept in parts (message_parts), stored before the change.
      const big: StoredMessage = JSON.parse(
        JSON.stringify(pdf).replace(/"data":"JVBERi0/, `"data":"JVBERi0${"QUJD".repeat(200_000)}`),
      );
      Object.assign(big, { id: `${pdf.id}-big`, seq: i.store.lastSeq() + 1 });
      i.store.insertMessages([big], "recount-test", oldChars);
      // The object as an upgrade finds it: old weights, no recount recorded, nothing cached.
      sql.exec(`UPDATE messages SET chars = ? WHERE seq = ?`, oldChars(pdf), pdf.seq);
      sql.exec(`DELETE FROM kv WHERE key = ?`, FETCHED_RECOUNT_KEY);
      const before = { pdf: charsOf(sql, pdf.seq), big: charsOf(sql, big.seq) };
      const parts = sql.exec(`SELECT 1 FROM message_parts WHERE seq = ?`, big.seq).toArray().length;
      i.cache.forget();
      const tailWeight = i.cache.replaySource(head).reduce((n, m) => n + replayChars(m), 0);
      return {
        before,
        parts,
        unsummarized: i.cache.unsummarizedChars(head),
        tailWeight,
        after: { pdf: charsOf(sql, pdf.seq), big: charsOf(sql, big.seq) },
        weights: { pdf: replayChars(pdf), big: replayChars(big) },
        marker: sql.exec(`SELECT value FROM kv WHERE key = ?`, FETCHED_RECOUNT_KEY).toArray().length,
      };
    });
    expect(out.parts).toBeGreaterThan(1);
    expect(out.before.pdf).toBeGreaterThan(out.weights.pdf);
    expect(out.before.big).toBeGreaterThan(out.weights.big);
    expect(out.after).toEqual(out.weights);
    expect(out.unsummarized).toBe(out.tailWeight);
    expect(out.marker).toBe(1);
    // The conversation's view agrees.
    const view = await api("GET", `/v1/conversations/${id}`);
    expect(view.status).toBe(200);
    expect((view.json as { unsummarizedChars: number }).unsummarizedChars).toBe(out.tailWeight);
  });

  it("runs once: a row weighed after the recount is left as stored, and a superseded row (0) stays 0", async () => {
    const id = await withFetchedPdf();
    const out = await inConversation(id, async (i, state) => {
      const sql = state.storage.sql;
      const head = i.record.head!;
      const pdf = i.cache.replaySource(head).find(isFetch)!;
      i.cache.forget();
      i.cache.unsummarizedChars(head); // the recount ran (or found it done)
      sql.exec(`UPDATE messages SET chars = 12345 WHERE seq = ?`, pdf.seq);
      i.cache.forget();
      i.cache.unsummarizedChars(head);
      const afterDone = charsOf(sql, pdf.seq);
      sql.exec(`UPDATE messages SET chars = 0 WHERE seq = ?`, pdf.seq);
      sql.exec(`DELETE FROM kv WHERE key = ?`, FETCHED_RECOUNT_KEY);
      i.cache.forget();
      i.cache.unsummarizedChars(head);
      return { afterDone, superseded: charsOf(sql, pdf.seq) };
    });
    expect(out).toEqual({ afterDone: 12345, superseded: 0 });
  });
});
