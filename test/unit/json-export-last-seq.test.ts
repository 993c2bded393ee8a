// The JSON scanner reads one field of this API's JSON export around the messages: the top-level
// `conversation`'s `lastSeq`, which says whether an export with no messages is the export of an
// empty conversation (importable as one) or a document whose messages were cut or edited away.
// Read as it streams, in any chunking, and only at that place: the same key elsewhere counts not.
import { describe, expect, it } from "vitest";
import { JsonMessageScanner } from "../../core/transcript/message-scanner";

function scanned(text: string, size: number): JsonMessageScanner {
  const s = new JsonMessageScanner(1_000_000);
  for (let i = 0; i < text.length; i += size) s.push(text.slice(i, i + size));
  s.end();
  return s;
}

const exportDoc = (conversation: unknown, messages: unknown[] = []) =>
  JSON.stringify(
    { conversation, episodes: [{ throughSeq: 3, lastSeq: 0 }], cards: [], attachments: [], messages },
    null,
    1,
  );

describe("the JSON export's lastSeq", () => {
  it.each([1, 3, 11, 1000])(
    "says an export with lastSeq 0 is the export of an empty conversation (chunks of %i)",
    (size) => {
      const doc = exportDoc({ id: "c1", settings: { lastSeq: 5, nested: { a: [1] } }, lastSeq: 0, messageCount: 0 });
      expect(scanned(doc, size).emptyExport).toBe(true);
    },
  );

  it.each([1, 4, 1000])("says an export whose conversation held messages is not (chunks of %i)", (size) => {
    expect(scanned(exportDoc({ id: "c1", lastSeq: 12, messageCount: 12 }), size).emptyExport).toBe(false);
  });

  it("reads the field wherever the conversation sits, after the messages too", () => {
    expect(scanned('{"messages":[],"conversation":{"title":"x","lastSeq":0}}', 2).emptyExport).toBe(true);
  });

  it("takes only a number 0 at the conversation's own level, the last of duplicate keys, as JSON.parse does", () => {
    for (const doc of [
      '{"messages":[]}',
      '{"conversation":null,"messages":[]}',
      '{"conversation":{"lastSeq":"0"},"messages":[]}',
      '{"conversation":{"meta":{"lastSeq":0}},"messages":[]}',
      '{"lastSeq":0,"messages":[]}',
      '{"conversation":{"lastSeq":0,"lastSeq":4},"messages":[]}',
      '{"conversation":{"lastSeq":0},"conversation":{"lastSeq":4},"messages":[]}',
      '[{"role":"user","content":"hi"}]',
    ])
      expect(scanned(doc, 3).emptyExport, doc).toBe(false);
    expect(scanned('{"conversation":{"lastSeq":4,"lastSeq":0},"messages":[]}', 3).emptyExport).toBe(true);
  });
});
