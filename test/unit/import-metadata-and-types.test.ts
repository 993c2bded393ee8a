// Two rules of the import's reading (core/transcript): a JSON body's messages are messages only (an
// element with another `type`, however spelled, is refused: JSONL's metadata lines have no place
// there), and an export's conversation metadata, which copies a paused turn's calls one level
// deeper than their message holds them, may nest as deep as those calls need, and no deeper.
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../core/json-guard";
import { JsonMessageScanner, MAX_METADATA_DEPTH } from "../../core/transcript/message-scanner";
import { ExportLines, parseImportedMessage } from "../../core/transcript/transcript-check";

function scan(text: string, size: number): JsonMessageScanner {
  const s = new JsonMessageScanner(1_000_000);
  // As the import does: the messages taken so far name the next one.
  for (let i = 0; i < text.length; i += size) s.countHint += s.push(text.slice(i, i + size)).length;
  s.end();
  return s;
}

/** An object nested `n` levels from its own brace: {"a":{"a":…1}}. */
function nested(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

const pausedConversation = (inputDepth: number) => ({
  id: "conv_1",
  lastSeq: 2,
  requiresAction: { turnId: "t1", calls: [{ id: "toolu_1", name: "deep", input: nested(inputDepth) }] },
});

describe("a JSON body's messages", () => {
  it.each([1, 3, 1000])("refuses an element whose type is not message (chunks of %i)", (size) => {
    for (const [body, said] of [
      ['{"messages":[{"type":"conversation","lastSeq":0}]}', 'type "conversation"'],
      ['[{"type":"conversation","lastSeq":0}]', 'type "conversation"'],
      ['{"messages":[{"role":"user","content":"hi"},{"type":"episode"}]}', 'type "episode"'],
      ['{"messages":[{"typ\\u0065":"conv\\u0065rsation","lastSeq":0}]}', 'type "conversation"'],
      ['{"messages":[{"type":"message","type":"conversation","lastSeq":0}]}', 'type "conversation"'],
      ['{"messages":[{"type":5,"lastSeq":0}]}', "a type that is not a string"],
      ['{"messages":[{"type":"message","type":["x"]}]}', "a type that is not a string"],
    ]) {
      const index = body.includes('"hi"') ? 1 : 0;
      expect(() => scan(body, size), body).toThrow(`messages[${index}]: ${said} is not a message's`);
    }
  });

  it("takes messages with type message, or none, and a type deeper in the message", () => {
    const body = JSON.stringify({
      messages: [
        { type: "message", role: "user", content: [{ type: "text", text: '"type":"conversation"' }] },
        { role: "assistant", content: "ok", agent: { type: "x", segment: "s", name: "n", toolUseId: "t" } },
        { role: "user", content: "again", type: "message" },
      ],
      conversation: { type: "conversation", lastSeq: 3 },
    });
    for (const size of [1, 7, 1000]) expect(() => scan(body, size)).not.toThrow();
  });
});

describe("an export's conversation metadata", () => {
  it("may hold a paused call whose input nests as deep as a message's tool call may, in JSON", () => {
    const doc = (depth: number) =>
      JSON.stringify({
        format: "x",
        conversation: pausedConversation(depth),
        messages: [{ role: "user", content: "go" }],
      });
    for (const size of [1, 5, 10_000]) expect(() => scan(doc(MAX_JSON_DEPTH), size)).not.toThrow();
    // Bounded all the same: one level past what a paused call needs is refused at its bracket.
    expect(() => scan(doc(MAX_JSON_DEPTH + 1), 10_000)).toThrow(
      `conversation: nested deeper than ${MAX_METADATA_DEPTH} levels`,
    );
    // Elsewhere in the document the body's own rule holds.
    expect(() => scan(JSON.stringify({ episodes: nested(MAX_JSON_DEPTH), messages: [] }), 100)).toThrow(
      "body: nested deeper than 64 levels",
    );
  });

  it("may hold it on a JSONL conversation line, which is skipped before the message checks", () => {
    const lines = new ExportLines();
    const line = JSON.stringify({ type: "conversation", ...pausedConversation(MAX_JSON_DEPTH), lastSeq: 0 });
    expect(parseImportedMessage(line, "messages[0] (line 1)", (l) => lines.add(l, "line 1"))).toBeNull();
    expect(lines.emptyExport).toBe(true);
    const deeper = JSON.stringify({ type: "conversation", ...pausedConversation(MAX_JSON_DEPTH + 1) });
    expect(() => parseImportedMessage(deeper, "messages[0] (line 1)")).toThrow("nested deeper than");
    // A message is held to its own rule still.
    const message = (depth: number) =>
      JSON.stringify({
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "deep", input: nested(depth) }],
      });
    expect(parseImportedMessage(message(MAX_JSON_DEPTH), "m")).not.toBeNull();
    expect(() => parseImportedMessage(message(MAX_JSON_DEPTH + 1), "m")).toThrow("m: nested deeper than 67 levels");
  });
});
