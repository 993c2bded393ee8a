// Text attachments in UTF-16 and Windows-1252: read as their letters through a UTF-8 copy beside
// the blob, while the blob (and its download) stays exactly as uploaded.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenantWithId, send, worker } from "./helpers";
import { toolText, upload } from "./attachment-helpers";
import { attachmentLineIndexKey, attachmentPrefix, attachmentTextKey } from "../../r2-layout";
import { purgeAttachment } from "../../services/attachments/delete";
import { LineIndexer } from "../../services/attachments/formats/text/line-index";
import { type AttachmentRow, getAttachmentRow } from "../../services/attachments/store";
import { buildTextIndex, textViewFor } from "../../services/attachments/text-view";

const LINES = ["Grüße aus Köln", "naïve café — déjà vu", "日本語の行", "last line 🙂"];

function utf16(text: string, { bom, bigEndian }: { bom: boolean; bigEndian: boolean }): Uint8Array {
  const units = (bom ? "\ufeff" : "") + text;
  const out = new Uint8Array(units.length * 2);
  for (let i = 0; i < units.length; i++) {
    const u = units.charCodeAt(i);
    out[2 * i + (bigEndian ? 1 : 0)] = u & 0xff;
    out[2 * i + (bigEndian ? 0 : 1)] = u >> 8;
  }
  return out;
}

/** Windows-1252 bytes of text whose characters are all in Latin-1 (and the euro sign). */
function cp1252(text: string): Uint8Array {
  return Uint8Array.from([...text], (ch) => (ch === "€" ? 0x80 : ch.charCodeAt(0)));
}

// One tenant for the file: its id names the R2 keys the tests look at.
const owner = newTenantWithId();
const tenant = async () => (await owner).tenantId;
const key = async () => (await owner).key;

describe("text attachments in other encodings", () => {
  it("a UTF-16LE file with a byte-order mark reads as its text; the blob and its download are the upload's bytes", async () => {
    const id = await createConversation(undefined, await key());
    const bytes = utf16(`${LINES.join("\r\n")}\r\n`, { bom: true, bigEndian: false });
    const up = await upload(id, "notes.txt", bytes, "text/plain", await key());
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({ size: bytes.length, facts: { kind: "text", lines: 4, encoding: "utf-16le" } });
    expect(up.json.note).toContain("4 lines; encoded in UTF-16LE");
    const read = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-4"}`, await key()),
    );
    expect(read).toContain(`lines 1-4 of 4]\n${LINES.join("\n")}`);
    expect(read).not.toContain("\u0000");
    const down = await worker().fetch(
      new Request(`http://chat.test/v1/conversations/${id}/attachments/${up.json.id}/content`, {
        headers: { authorization: `Bearer ${await key()}` },
      }),
    );
    expect(new Uint8Array(await down.arrayBuffer())).toEqual(bytes);
    const blob = await env.BUCKET.get(`${attachmentPrefix(await tenant(), up.json.id)}blob`);
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(bytes);
    const copy = await env.BUCKET.get(attachmentTextKey(await tenant(), up.json.id));
    expect(await copy!.text()).toBe(`${LINES.join("\r\n")}\r\n`);
  });

  it("UTF-16 without a mark (big-endian) is recognised by its zero bytes, whatever its name", async () => {
    const id = await createConversation(undefined, await key());
    const text = Array.from({ length: 300 }, (_, i) => `row ${i + 1} plain ascii words`).join("\n");
    const up = await upload(
      id,
      "export.dat",
      utf16(text, { bom: false, bigEndian: true }),
      "application/octet-stream",
      await key(),
    );
    expect(up.json).toMatchObject({ type: "text/plain", facts: { kind: "text", lines: 300, encoding: "utf-16be" } });
    const read = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"299-300"}`, await key()),
    );
    expect(read).toContain("row 299 plain ascii words\nrow 300 plain ascii words");
  });

  it("a UTF-16 CSV is a spreadsheet whose rows read through the copy", async () => {
    const id = await createConversation(undefined, await key());
    const csv = "city,temp\nZürich,21\nMálaga,30\n";
    const up = await upload(id, "weather.csv", utf16(csv, { bom: true, bigEndian: false }), "text/csv", await key());
    expect(up.json.facts).toMatchObject({ kind: "spreadsheet", columns: ["city", "temp"], rows: 2 });
    const rows = toolText(
      await send(id, `@tool spreadsheet_read {"attachment_id":"${up.json.id}","rows":"1-2"}`, await key()),
    );
    expect(rows).toContain("city\ttemp\nZürich\t21\nMálaga\t30");
  });

  it("a Windows-1252 file reads as its accented letters, not as U+FFFD", async () => {
    const id = await createConversation(undefined, await key());
    const text = "Prix: 12 € — café crème\nÀ bientôt, Zoë\n";
    const up = await upload(id, "menu.txt", cp1252(text.replace("—", "-")), "text/plain", await key());
    expect(up.json.facts).toMatchObject({ kind: "text", lines: 2, encoding: "windows-1252" });
    const read = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-2"}`, await key()),
    );
    expect(read).toContain("Prix: 12 € - café crème\nÀ bientôt, Zoë");
    expect(read).not.toContain("\ufffd");
  });

  it("UTF-8 with one damaged byte stays UTF-8: no copy, and its other letters intact", async () => {
    const id = await createConversation(undefined, await key());
    const good = new TextEncoder().encode("Grüße — 日本語 — naïve\nsecond line ünïcödé\n");
    const bytes = new Uint8Array(good.length + 1);
    bytes.set(good);
    bytes[good.length] = 0xff;
    const up = await upload(id, "mostly.txt", bytes, "text/plain", await key());
    expect(up.json.facts).toEqual({ kind: "text", lines: 3 });
    expect(await env.BUCKET.head(attachmentTextKey(await tenant(), up.json.id))).toBeNull();
    const read = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-2"}`, await key()),
    );
    expect(read).toContain("Grüße — 日本語 — naïve\nsecond line ünïcödé");
  });

  it("deleting the attachment removes its UTF-8 copy with its blob", async () => {
    const id = await createConversation(undefined, await key());
    const up = await upload(id, "gone.txt", utf16("bye\n", { bom: true, bigEndian: false }), "text/plain", await key());
    expect(await env.BUCKET.head(attachmentTextKey(await tenant(), up.json.id))).not.toBeNull();
    expect(
      (await api("DELETE", `/v1/conversations/${id}/attachments/${up.json.id}`, undefined, { key: await key() }))
        .status,
    ).toBe(204);
    expect((await env.BUCKET.list({ prefix: attachmentPrefix(await tenant(), up.json.id) })).objects).toEqual([]);
  });

  it("a file indexed before encodings were told apart is indexed again on its next read", async () => {
    const id = await createConversation(undefined, await key());
    const up = await upload(
      id,
      "old.txt",
      utf16(`${LINES.join("\n")}\n`, { bom: true, bigEndian: false }),
      "text/plain",
      await key(),
    );
    // What the index looked like then: the blob's own newlines, read as UTF-8, no copy.
    const old = new LineIndexer();
    old.push(
      new Uint8Array(
        await (await env.BUCKET.get(`${attachmentPrefix(await tenant(), up.json.id)}blob`))!.arrayBuffer(),
      ),
    );
    await env.BUCKET.put(
      `${attachmentPrefix(await tenant(), up.json.id)}line-index.json`,
      JSON.stringify(old.finish()),
    );
    await env.BUCKET.delete(attachmentTextKey(await tenant(), up.json.id));
    const read = toolText(
      await send(id, `@tool file_read {"attachment_id":"${up.json.id}","lines":"1-4"}`, await key()),
    );
    expect(read).toContain(LINES.join("\n"));
    expect(read).not.toContain("\u0000");
  });

  it("a first read that lands while its attachment is deleted removes the index and copy it wrote", async () => {
    const id = await createConversation(undefined, await key());
    const up = await upload(
      id,
      "late.txt",
      utf16("one\ntwo\n", { bom: true, bigEndian: false }),
      "text/plain",
      await key(),
    );
    const t = await tenant();
    await env.BUCKET.delete([attachmentLineIndexKey(t, up.json.id), attachmentTextKey(t, up.json.id)]);
    // The row went while the read was writing: what it wrote must not outlive the delete.
    const ids = { tenantId: t, attachmentId: up.json.id, blobKey: `${attachmentPrefix(t, up.json.id)}blob` };
    await expect(buildTextIndex(env.BUCKET, { ...ids, exists: async () => false })).rejects.toThrow(/deleted/);
    expect(await env.BUCKET.head(attachmentLineIndexKey(t, up.json.id))).toBeNull();
    expect(await env.BUCKET.head(attachmentTextKey(t, up.json.id))).toBeNull();
  });

  it("a delete hides the row before it sweeps the index and copy, so a read that saw the row is swept", async () => {
    const id = await createConversation(undefined, await key());
    const up = await upload(
      id,
      "race.txt",
      utf16("a\nb\n", { bom: true, bigEndian: false }),
      "text/plain",
      await key(),
    );
    const t = await tenant();
    const row = (await getAttachmentRow(env.DB, t, up.json.id))!;
    // The first read writes the index and the copy (the row is there).
    await textViewFor(env.BUCKET, { tenantId: t, attachmentId: row.id, blobKey: row.r2Key, exists: async () => true });
    expect(await env.BUCKET.head(attachmentTextKey(t, row.id))).not.toBeNull();
    // A writer looks for the row after it wrote (the test above): whatever it wrote before the row
    // was hidden is under the prefix the sweep removes after it, and one that writes later finds no row.
    const seenAtSweep: (AttachmentRow | null)[] = [];
    const bucket = new Proxy(env.BUCKET, {
      get(target, prop) {
        if (prop !== "delete") return Reflect.get(target, prop).bind(target);
        return async (keys: string | string[]) => {
          seenAtSweep.push(await getAttachmentRow(env.DB, t, row.id));
          await target.delete(keys);
        };
      },
    });
    await purgeAttachment({ ...env, BUCKET: bucket }, row);
    expect(seenAtSweep.length).toBeGreaterThan(0);
    expect(seenAtSweep).toEqual(seenAtSweep.map(() => null));
    expect((await env.BUCKET.list({ prefix: attachmentPrefix(t, up.json.id) })).objects).toEqual([]);
    expect(await env.DB.prepare("SELECT id FROM attachments WHERE id LIKE ?").bind(`${row.id}%`).first()).toBeNull();
  });
});
