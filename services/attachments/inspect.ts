// What an uploaded attachment is, from its own bytes, through ranged reads only: the type from
// magic bytes, the format from the registry (formats/index.ts), then the facts its note states as
// that format probes them (PDF pages from the cross-reference data, image dimensions from the
// header, spreadsheet sheets and rows, text lines from the line index).
import { candidateFormats, type AttachmentFacts } from "./formats";
import type { RangeReader } from "./formats/shared/range-reader";
import { sniffType } from "./formats/sniff";
import { LineIndexer, type LineIndex } from "./formats/text/line-index";
import { attachmentLineIndexKey } from "../../r2-layout";

const HEAD_BYTES = 8 * 1024;

export async function inspectAttachment(
  reader: RangeReader,
  opts: { name: string; declaredType: string | null; lineIndex: () => Promise<LineIndex> },
): Promise<{ type: string; facts: AttachmentFacts }> {
  const head = await reader.read(0, HEAD_BYTES);
  const type = sniffType(head, opts.name, opts.declaredType);
  for (const { format, tentative } of candidateFormats({
    head,
    name: opts.name,
    declaredType: opts.declaredType,
    type,
  })) {
    try {
      const probed = await format.probe(reader, { type, head, lineIndex: opts.lineIndex });
      return { type: probed.type ?? type, facts: { kind: format.kind, ...probed.facts } };
    } catch (err) {
      // Only a hint pointed here (a name, a misplaced header): the file is not this format.
      if (tentative) continue;
      // A corrupt file still gets a note: it says what could not be established.
      return {
        type,
        facts: {
          kind: format.keepsKindWhenUnreadable ? format.kind : "binary",
          problem: err instanceof Error ? err.message : String(err),
        },
      };
    }
  }
  return { type, facts: { kind: "binary" } };
}

/** Streams an object once through the line indexer and stores the index next to it. */
export async function buildLineIndex(
  bucket: R2Bucket,
  { tenantId, attachmentId, blobKey }: { tenantId: string; attachmentId: string; blobKey: string },
): Promise<LineIndex> {
  const obj = await bucket.get(blobKey);
  if (!obj) throw new Error("the attachment's bytes are gone");
  const indexer = new LineIndexer();
  for await (const chunk of obj.body as unknown as AsyncIterable<Uint8Array>) indexer.push(chunk);
  const index = indexer.finish();
  await bucket.put(attachmentLineIndexKey(tenantId, attachmentId), JSON.stringify(index), {
    httpMetadata: { contentType: "application/json" },
  });
  return index;
}

/** The stored line index, built on first use when the upload did not produce one. */
export async function lineIndexFor(
  bucket: R2Bucket,
  { tenantId, attachmentId, blobKey }: { tenantId: string; attachmentId: string; blobKey: string },
): Promise<LineIndex> {
  const stored = await bucket.get(attachmentLineIndexKey(tenantId, attachmentId));
  if (stored) return (await stored.json()) as LineIndex;
  return buildLineIndex(bucket, { tenantId, attachmentId, blobKey });
}
