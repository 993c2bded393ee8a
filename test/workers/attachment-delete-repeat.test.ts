// An attachment DELETE cut short (a 5xx) after a first read's line index or an extraction job's
// page landed while it ran: repeating it completes it (204, nothing left in R2 or the cortex), then
// the id is a 404.
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { attachmentLineIndexKey, attachmentPrefix } from "../../r2-layout";
import { indexPdfPages } from "../../services/attachments/page-index";
import { getAttachmentRow } from "../../services/attachments/store";
import { cortexFor, shardDatabase, shardNames } from "../../services/cortex/routing";
import { toolText, upload } from "./attachment-helpers";
import { deleteThrough, flakyBucket, watchedDb } from "./delete-faults";
import { api, createConversation, newTenantWithId, r2KeysUnder, send } from "./helpers";

/** The app's D1, whose first statement changing the `attachments` table runs `before()` first. */
function hookedDb(before: () => Promise<void>): D1Database {
  let done = false;
  return watchedDb(env.DB, async (sql) => {
    if (done || !/^(update|delete from) "attachments"/i.test(sql)) return;
    done = true;
    await before();
  });
}

describe("DELETE /v1/conversations/:id/attachments/:attachmentId cut short", () => {
  it("a repeat completes it: the line index a racing first read wrote is gone, then the id is a 404", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const up = await upload(conv, "rows.txt", "city pop\nOslo 700000\nLima 9700000\n", "text/plain", key);
    expect(up.status).toBe(201);
    const att: string = up.json.id;
    const read = await send(conv, `@tool file_read {"attachment_id":"${att}","lines":"2-2"}`, key);
    expect(toolText(read)).toContain("Oslo");
    expect(await r2KeysUnder(attachmentPrefix(tenantId, att))).toContain(attachmentLineIndexKey(tenantId, att));

    const lineIndex = attachmentLineIndexKey(tenantId, att);
    const built = await (await env.BUCKET.get(lineIndex))!.text();
    const r2 = { on: false };
    let raced = false;
    const db = hookedDb(async () => {
      raced = true;
      // A first read that streamed the bytes before the delete's first sweep lands its line index
      // now, finds the row still there (text-view.ts buildTextIndex), and so leaves the index for
      // the delete to sweep.
      await env.BUCKET.put(lineIndex, built);
      if (!(await getAttachmentRow(env.DB, tenantId, att))) throw new Error("the row went first");
      r2.on = true; // then R2 fails for a moment
    });
    const path = `/v1/conversations/${conv}/attachments/${att}`;
    expect(await deleteThrough({ path, key, db, bucket: flakyBucket(r2) })).toBeGreaterThanOrEqual(500);
    r2.on = false;
    expect(raced).toBe(true);
    expect((await api("GET", `${path}/content`, undefined, { key })).status).toBe(404);

    expect((await api("DELETE", path, undefined, { key })).status).toBe(204);
    expect(await r2KeysUnder(attachmentPrefix(tenantId, att))).toEqual([]);
    expect(await env.DB.prepare("SELECT id FROM attachments WHERE id LIKE ?").bind(`${att}%`).first()).toBeNull();
    // Done: the id is now as unknown as any other.
    expect((await api("DELETE", path, undefined, { key })).status).toBe(404);
    expect((await api("GET", `${path}/content`, undefined, { key })).status).toBe(404);
  });

  it("a repeat completes it: the PDF page an extraction job indexed while it ran leaves the cortex", async () => {
    const { tenantId, key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc.addPage([300, 200]).drawText("page 1 kumquat", { x: 20, y: 100, font, size: 12 });
    const up = await upload(conv, "book.pdf", await doc.save(), "application/pdf", key);
    expect(up.status).toBe(201);
    const att: string = up.json.id;
    const row = await getAttachmentRow(env.DB, tenantId, att);
    expect(row).not.toBeNull();
    const indexed = () => cortexFor(env, tenantId).then((c) => c.countIndexedPages(tenantId, att));

    const shardFails = { on: false };
    const shards = Object.fromEntries(
      shardNames(env).map((name) => [
        name,
        watchedDb(shardDatabase(env, name), async (sql) => {
          if (shardFails.on && /^delete from cortex_docs/i.test(sql)) throw new Error("injected: shard write failed");
        }),
      ]),
    );
    let raced = false;
    const db = hookedDb(async () => {
      raced = true;
      // An extraction job's pages landing while the delete runs: the row is still there, so the
      // job leaves them for the delete to sweep (page-index.ts indexPdfPages).
      expect(await indexPdfPages(env, row!, [{ page: 1, text: "page 1 kumquat" }])).toBe(1);
      shardFails.on = true; // then the shard fails for a moment
    });
    const path = `/v1/conversations/${conv}/attachments/${att}`;
    expect(await deleteThrough({ path, key, db, bucket: env.BUCKET, shards })).toBeGreaterThanOrEqual(500);
    shardFails.on = false;
    expect(raced).toBe(true);
    expect(await indexed()).toBe(1);

    expect((await api("DELETE", path, undefined, { key })).status).toBe(204);
    expect(await indexed()).toBe(0);
    expect(await r2KeysUnder(attachmentPrefix(tenantId, att))).toEqual([]);
    expect(await env.DB.prepare("SELECT id FROM attachments WHERE id LIKE ?").bind(`${att}%`).first()).toBeNull();
    expect((await api("DELETE", path, undefined, { key })).status).toBe(404);
  });
});
