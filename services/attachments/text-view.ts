// A text attachment as the line tools read it: its line index and a reader over UTF-8 bytes. A
// UTF-8 file (a damaged byte or two included) is read as stored. A UTF-16 or Windows-1252 file is
// transcoded once, on first use, into a UTF-8 copy beside its blob (r2-layout attachmentTextKey),
// and indexed and read from that copy; the blob stays exactly as uploaded, and downloads serve it.
// What a first read writes (the index, the copy) may land while the attachment is being deleted:
// the writer looks for the row afterwards and removes what it wrote when the row is gone; the delete
// hides the row before it sweeps these keys, so what a writer wrote while it saw the row is swept
// (services/attachments/delete.ts).
import { attachmentLineIndexKey, attachmentTextKey } from "../../r2-layout";
import type { TextView } from "./formats/format";
import { type TextEncoding, Utf8Check, Utf8Tally, utf16Of } from "./formats/text/encoding";
import { LINE_INDEX_VERSION, LineIndexer, type LineIndex } from "./formats/text/line-index";
import { r2RangeReader } from "./r2-range-reader";
import { R2StreamWriter } from "../transfer/r2-stream-writer";

interface TextIds {
  tenantId: string;
  attachmentId: string;
  blobKey: string;
  /** Whether the attachment's row is still there; looked at after the index is written. */
  exists: () => Promise<boolean>;
}

/** The keys a first read may write beside the blob. */
export const derivedTextKeys = (tenantId: string, attachmentId: string): string[] => [
  attachmentLineIndexKey(tenantId, attachmentId),
  attachmentTextKey(tenantId, attachmentId),
];

const HEAD_BYTES = 8 * 1024;

async function chunksOf(bucket: R2Bucket, key: string): Promise<AsyncIterable<Uint8Array>> {
  const obj = await bucket.get(key);
  if (!obj) throw new Error("the attachment's bytes are gone");
  return obj.body as unknown as AsyncIterable<Uint8Array>;
}

/** Writes the UTF-8 copy of a file in another encoding, indexing its lines as they go out. */
async function transcode(
  bucket: R2Bucket,
  { ids, encoding }: { ids: TextIds; encoding: Exclude<TextEncoding, "utf-8"> },
): Promise<LineIndex> {
  const decoder = new TextDecoder(encoding);
  const encoder = new TextEncoder();
  const indexer = new LineIndexer();
  const out = new R2StreamWriter(
    bucket,
    attachmentTextKey(ids.tenantId, ids.attachmentId),
    "text/plain; charset=utf-8",
  );
  const emit = async (text: string) => {
    if (!text) return;
    indexer.push(encoder.encode(text));
    await out.write(text);
  };
  try {
    for await (const chunk of await chunksOf(bucket, ids.blobKey)) await emit(decoder.decode(chunk, { stream: true }));
    await emit(decoder.decode());
    await out.close();
  } catch (err) {
    await out.abort();
    throw err;
  }
  return { ...indexer.finish(), encoding };
}

/** Streams the blob once (twice or three times when it is not UTF-8) and stores its line index. */
export async function buildTextIndex(bucket: R2Bucket, ids: TextIds): Promise<LineIndex> {
  const first = await bucket.get(ids.blobKey, { range: { offset: 0, length: HEAD_BYTES } });
  if (!first) throw new Error("the attachment's bytes are gone");
  let encoding: TextEncoding = utf16Of(new Uint8Array(await first.arrayBuffer())) ?? "utf-8";
  let index: LineIndex | null = null;
  if (encoding === "utf-8") {
    const indexer = new LineIndexer();
    const check = new Utf8Check();
    for await (const chunk of await chunksOf(bucket, ids.blobKey)) {
      indexer.push(chunk);
      check.push(chunk);
    }
    index = indexer.finish();
    if (!check.valid()) {
      const tally = new Utf8Tally();
      for await (const chunk of await chunksOf(bucket, ids.blobKey)) tally.push(chunk);
      encoding = tally.finish();
    }
  }
  if (encoding !== "utf-8") index = await transcode(bucket, { ids, encoding });
  const stored: LineIndex = { ...index!, encodingChecked: true, version: LINE_INDEX_VERSION };
  await bucket.put(attachmentLineIndexKey(ids.tenantId, ids.attachmentId), JSON.stringify(stored), {
    httpMetadata: { contentType: "application/json" },
  });
  // A row still present means its delete, if any, sweeps these keys after this write.
  if (!(await ids.exists())) {
    await bucket.delete(derivedTextKeys(ids.tenantId, ids.attachmentId));
    throw new Error("the attachment was deleted");
  }
  return stored;
}

/** The attachment as text: its stored line index (built on first use) and a reader over UTF-8 bytes. */
export async function textViewFor(bucket: R2Bucket, ids: TextIds): Promise<TextView> {
  const stored = await bucket.get(attachmentLineIndexKey(ids.tenantId, ids.attachmentId));
  const kept = stored ? ((await stored.json()) as LineIndex) : null;
  // An index built before encodings were told apart read every file as UTF-8, and one before byte
  // checkpoints (`marks`) leaves lines after a huge one out of reach: built again, once.
  const index = kept?.encodingChecked && kept.version === LINE_INDEX_VERSION ? kept : await buildTextIndex(bucket, ids);
  const reader = await r2RangeReader(
    bucket,
    index.encoding ? attachmentTextKey(ids.tenantId, ids.attachmentId) : ids.blobKey,
  );
  if (!reader) throw new Error("the attachment's bytes are gone");
  return { index, reader };
}
