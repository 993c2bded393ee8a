// What an uploaded attachment is, from its own bytes, through ranged reads only: the type from
// magic bytes, the format from the registry (formats/index.ts), then the facts its note states as
// that format probes them (PDF pages from the cross-reference data, image dimensions from the
// header, spreadsheet sheets and rows, text lines from the line index: text-view.ts).
import { candidateFormats, type AttachmentFacts } from "./formats";
import type { RangeReader } from "./formats/shared/range-reader";
import { sniffType } from "./formats/sniff";
import type { TextView } from "./formats/format";

const HEAD_BYTES = 8 * 1024;

export async function inspectAttachment(
  reader: RangeReader,
  opts: { name: string; declaredType: string | null; text: () => Promise<TextView> },
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
      const probed = await format.probe(reader, { type, head, text: opts.text });
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
