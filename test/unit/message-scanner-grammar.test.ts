// The JSON scanner refuses what JSON.parse refuses around the messages too (API.md Conventions: bad
// input is a 400 naming the problem): a stray comma or colon, text after the document, a bad escape
// in a string the scanner skips. Checked as the body streams, in any chunking.
import { describe, expect, it } from "vitest";
import { JsonMessageScanner, ScanError } from "../../core/transcript/message-scanner";

const m = '{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}';

/** The messages the scanner yields for the body fed in chunks of `size`, or its refusal. */
function scan(body: string, size: number): string[] | ScanError {
  const s = new JsonMessageScanner(1_000_000);
  const out: string[] = [];
  try {
    for (let i = 0; i < body.length; i += size) for (const raw of s.push(body.slice(i, i + size))) out.push(raw.text);
    s.end();
    return out;
  } catch (err) {
    if (err instanceof ScanError) return err;
    throw err;
  }
}

const malformed = [
  `{"messages":[${m}]} "trailing junk"`,
  `{"messages":[${m}]} true`,
  `{"messages":[${m}],,,}`,
  `{"messages":[${m},]}`,
  `{"model" "x", "messages":[${m}]}`,
  `{"model":"a\\qb","messages":[${m}]}`,
  `{"messages":[${m}]:1}`,
  `{,"messages":[${m}]}`,
  `{"messages":[,${m}]}`,
  `{"messages":[${m}${m}]}`,
  `{"a":1 "messages":[${m}]}`,
  `{"a" 1, "messages":[${m}]}`,
  `{"a"::1, "messages":[${m}]}`,
  `{"a":, "messages":[${m}]}`,
  `{"a":1 2, "messages":[${m}]}`,
  `{"a":[1 2], "messages":[${m}]}`,
  `{"a":{"b"}, "messages":[${m}]}`,
  `{"a":"\\u12g4", "messages":[${m}]}`,
  `{"a":"\\u12", "messages":[${m}]}`,
  `{"a\tb":1, "messages":[${m}]}`,
  `{"messages":[${m}]}{}`,
  `[${m}] []`,
  `[${m}],`,
  // Whitespace JSON does not name between tokens: a no-break space, a line separator.
  `{"a":1,\u00a0"messages":[${m}]}`,
  `{"messages":\u2028[${m}]}`,
];

const valid = [
  `{"messages":[${m}]}`,
  `  {"model":"x","max_tokens":10,"messages":[${m}],"system":"a \\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u00e9\\uD83D\\uDE00"} `,
  `{"a":[],"b":{},"c":[1,-2.5e3,true,false,null,{"d":[{}]}],"messages":[${m}],"e":{"f":"g"}}`,
  `[${m}]`,
  `{"conversation":{"title":"x","lastSeq":2},"messages":[${m}]}`,
];

describe("the JSON scanner's grammar around the messages", () => {
  it.each([1, 2, 7, 10_000])("refuses each malformed body, as JSON.parse does (chunks of %i)", (size) => {
    for (const body of malformed) {
      expect(() => JSON.parse(body), body).toThrow();
      const r = scan(body, size);
      expect(r, body).toBeInstanceOf(ScanError);
      expect((r as ScanError).message, body).toMatch(/^body: malformed JSON \(.+\)$/);
    }
  });

  it.each([1, 3, 10_000])("reads each well-formed body's messages (chunks of %i)", (size) => {
    for (const body of valid) {
      expect(() => JSON.parse(body), body).not.toThrow();
      const r = scan(body, size);
      expect(r, body).not.toBeInstanceOf(ScanError);
      expect(
        (r as string[]).map((t) => JSON.parse(t)),
        body,
      ).toEqual([
        { role: "user", content: "hi" },
        { role: "assistant", content: "yo" },
      ]);
    }
  });

  it("names what it expected", () => {
    expect((scan(`{"messages":[${m},]}`, 5) as ScanError).message).toBe(
      'body: malformed JSON (unexpected "]"; expected a value)',
    );
    expect((scan(`{"model" "x","messages":[]}`, 5) as ScanError).message).toBe(
      'body: malformed JSON (unexpected "\\""; expected ":" after a key)',
    );
    expect((scan(`{"messages":[${m}]} true`, 5) as ScanError).message).toBe(
      "body: malformed JSON (text after the document)",
    );
    expect((scan(`{"model":"a\\qb","messages":[]}`, 5) as ScanError).message).toBe(
      'body: malformed JSON (bad escape "\\q" in a string)',
    );
  });

  it("leaves a message's own text to the message's parse, which names it", () => {
    // The scanner yields the element; JSON.parse of it (transcript-check.ts) refuses it by index.
    const r = scan(`{"messages":[{"role":"user","content":"a\\qb"}]}`, 4);
    expect(r).toEqual(['{"role":"user","content":"a\\qb"}']);
  });
});
