// The import's pure parts: the streaming scanner (any chunking gives the same messages), the
// per-message checks, tool pairing, and how much of a region one fold takes.
import { describe, expect, it } from "vitest";
import { turnByTurnFoldLength } from "../../core/fold";
import { JsonlMessageScanner, JsonMessageScanner } from "../../core/transcript/message-scanner";
import { PairingCheck, parseImportedMessage } from "../../core/transcript/transcript-check";
import type { StoredMessage } from "../../core/types";

const messages = [
  { role: "user", content: 'hello "there" [not a bracket] {nor this}' },
  {
    role: "assistant",
    content: [
      { type: "tool_use", id: "t1", name: "memory_search", input: { query: "x\\y", nested: [1, { a: null }] } },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "found ✓ 😀" }] },
  { role: "assistant", content: [{ type: "text", text: "done" }] },
];

function scanAll(text: string, size: number) {
  const s = new JsonMessageScanner(1_000_000);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)).map((r) => r.text));
  s.end();
  return out.map((t) => JSON.parse(t));
}

describe("JSON message scanner", () => {
  const doc = JSON.stringify(
    { model: "m", system: "be {brief}", max_tokens: 5, messages, metadata: { messages: ["not these"] } },
    null,
    1,
  );
  it.each([1, 2, 7, 64, doc.length])("finds the same messages in chunks of %i characters", (size) => {
    expect(scanAll(doc, size)).toEqual(messages);
  });

  it("reads a bare top-level array", () => {
    expect(scanAll(JSON.stringify(messages), 5)).toEqual(messages);
  });

  it.each([
    ['{"messages": [1]}', /every element must be an object/],
    ['{"messages": [{}', /ends early/],
    ['{"model": "m"}', /messages: missing/],
    ['{"messages": [], "x": tru}', /not a JSON value/],
    ['{"messages": []} {}', /text after the document/],
    ['{"messages": [], "messages": []}', /two messages arrays/],
    ["", /empty/],
  ])("refuses %s", (text, reason) => {
    expect(() => scanAll(text, 3)).toThrow(reason);
  });

  it("applies the JSON body nesting rule outside the messages, refusing at the bracket past it", () => {
    const nest = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    // The document's first bracket is level 1: 64 levels in all are accepted, as on every JSON body.
    expect(scanAll(`{"x": ${nest(63)}, "messages": ${JSON.stringify(messages)}}`, 5)).toEqual(messages);
    expect(() => scanAll(`{"x": ${nest(64)}, "messages": []}`, 5)).toThrow("body: nested deeper than 64 levels");
    expect(() => scanAll(`{"messages": [], "x": ${'{"a":'.repeat(64)}1${"}".repeat(64)}}`, 5)).toThrow(
      "body: nested deeper than 64 levels",
    );
    // A body that never closes its brackets is refused at the 65th, not read to its end.
    const s = new JsonMessageScanner(1_000_000);
    s.push('{"x": ');
    expect(() => s.push("[".repeat(1_000_000))).toThrow("body: nested deeper than 64 levels");
  });

  it("measures each message's nesting from its own brace, as the per-message check does", () => {
    const deep = (n: number) => ({
      role: "assistant",
      content: [{ type: "tool_use", id: "d", name: "n", input: { v: JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`) } }],
    });
    // The message object, its content array and the block are 3 levels around the input, which may
    // itself nest 64 levels (its own brace the first), as any JSON body: 67 in all.
    expect(scanAll(JSON.stringify({ messages: [messages[0], deep(63)] }), 7)[1]).toEqual(deep(63));
    expect(() => parseImportedMessage(JSON.stringify(deep(63)), "m")).not.toThrow();
    expect(() => scanAll(JSON.stringify({ messages: [deep(64), messages[0]] }), 7)).toThrow(
      "messages[0]: nested deeper than 67 levels (64 inside a content block's fields)",
    );
    // Named by its place even when the messages before it came in the same piece of the body.
    expect(() => scanAll(JSON.stringify({ messages: [messages[0], deep(64)] }), 1_000_000)).toThrow(
      "messages[1]: nested deeper than 67 levels",
    );
    expect(() => parseImportedMessage(JSON.stringify(deep(64)), "m")).toThrow("m: nested deeper than 67 levels");
    // Parsed, each block's field is measured from its own level: a deep usage is not a deep input.
    expect(() =>
      parseImportedMessage(
        JSON.stringify({ ...messages[3], usage: { a: JSON.parse(`${"[".repeat(64)}${"]".repeat(64)}`) } }),
        "m",
      ),
    ).toThrow("m.usage: nested deeper than 64 levels");
  });

  it("refuses a message larger than the cap without holding more of it", () => {
    const s = new JsonMessageScanner(100);
    s.push('{"messages": [{"role": "user", "content": "');
    expect(() => s.push("x".repeat(200))).toThrow(/messages\[0\]: larger than 100/);
  });
});

describe("JSONL message scanner", () => {
  it("splits lines across chunks, skips blank lines and numbers lines", () => {
    const text = `${JSON.stringify(messages[0])}\r\n\n${JSON.stringify(messages[3])}`;
    for (const size of [1, 3, text.length]) {
      const s = new JsonlMessageScanner(1000);
      const out = [];
      for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)));
      out.push(...s.end());
      expect(out.map((r) => [r.line, JSON.parse(r.text)])).toEqual([
        [1, messages[0]],
        [3, messages[3]],
      ]);
    }
  });
});

describe("transcript checks", () => {
  const check = (ms: unknown[]) => {
    const p = new PairingCheck();
    ms.forEach((m, i) => {
      const parsed = parseImportedMessage(JSON.stringify(m), `messages[${i}]`);
      if (parsed) p.add(parsed, `messages[${i}]`);
    });
    p.end();
  };

  it("accepts a paired transcript and string content as a text block", () => {
    expect(() => check(messages)).not.toThrow();
    expect(parseImportedMessage(JSON.stringify(messages[0]), "m")!.content).toEqual([
      { type: "text", text: messages[0].content },
    ]);
  });

  it("takes a thinking model's reply as exported, and refuses what the API refuses on replay", () => {
    const reply = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "", signature: "sig" },
        { type: "text", text: "hi", citations: [{ type: "web_search_result_location", url: "https://example.com" }] },
      ],
      thinkingPrefixes: ["abc"],
      usage: {
        input_tokens: 1,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        thinking_tokens: 1,
        cost_usd: 0.00002,
      },
    };
    expect(parseImportedMessage(JSON.stringify(reply), "m")).toMatchObject({
      thinkingPrefixes: ["abc"],
      usage: { thinking_tokens: 1 },
    });
    expect(() =>
      parseImportedMessage(
        JSON.stringify({ role: "user", content: [{ type: "thinking", thinking: "", signature: "s" }] }),
        "m",
      ),
    ).toThrow(/a thinking block belongs in an assistant message/);
    expect(() =>
      parseImportedMessage(
        JSON.stringify({ role: "user", content: [{ type: "text", text: "q", citations: [{ type: "x" }] }] }),
        "m",
      ),
    ).toThrow(/citations belong in an assistant message/);
  });

  it("refuses a line nested past the limit for its depth, before parsing it", () => {
    // Unclosed, so only a parse would call it malformed: the depth is measured first.
    expect(() => parseImportedMessage("[".repeat(1_000_000), "messages[0] (line 1)")).toThrow(
      "messages[0] (line 1): nested deeper than 67 levels",
    );
    expect(() => parseImportedMessage(`{"role":"user","content":"${"[".repeat(100)}"}`, "m")).not.toThrow();
  });

  it("skips an export's metadata lines", () => {
    expect(parseImportedMessage('{"type":"card","card":{}}', "line 2")).toBeNull();
  });

  it("takes a call left without its result, as the platform's own exports carry it (a paused or cut-off turn)", () => {
    expect(() => check([messages[0], messages[1]])).not.toThrow();
    expect(() => check([messages[0], messages[1], { role: "user", content: "go on" }, messages[3]])).not.toThrow();
  });

  it.each([
    [
      [messages[0], messages[1], messages[3]],
      /messages\[1\]: tool_use t1 is followed by another assistant message \(messages\[2\]\)/,
    ],
    [
      [
        messages[0],
        messages[1],
        {
          role: "user",
          content: [
            { type: "text", text: "hm" },
            { type: "tool_result", tool_use_id: "t1", content: "r" },
          ],
        },
      ],
      /messages\[2\]: tool_result blocks must come before any other content of the message/,
    ],
    [
      [messages[0], messages[2]],
      /messages\[1\]: tool_result for t1, which the previous assistant message did not call/,
    ],
    [[{ role: "system", content: "x" }], /messages\[0\]\.role/],
    [[{ role: "user", content: "" }], /messages\[0\]\.content/],
    [
      [{ role: "user", content: [{ type: "tool_use", id: "a", name: "b", input: {} }] }],
      /messages\[0\]: a tool_use block belongs in an assistant message/,
    ],
    [[{ role: "user", content: "x", extra: 1 }], /unknown field messages\[0\]\.extra/],
    [[], /none/],
  ])("names the first bad message (%#)", (ms, reason) => {
    expect(() => check(ms)).toThrow(reason);
  });

  it("pairs a sub-agent's calls within its own segment", () => {
    const agent = { segment: "seg1", name: "helper", toolUseId: "d1" };
    expect(() =>
      check([
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "d1", name: "agent_delegate", input: {} }] },
        { role: "user", content: "task", agent },
        { role: "assistant", content: [{ type: "tool_use", id: "s1", name: "memory_search", input: {} }], agent },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "s1", content: "r" }], agent },
        { role: "assistant", content: "answer", agent },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "d1", content: "answer" }] },
      ]),
    ).not.toThrow();
  });
});

describe("turn-by-turn fold length", () => {
  const msg = (seq: number, role: "user" | "assistant", chars: number): StoredMessage => ({
    id: `m${seq}`,
    seq,
    role,
    content: [{ type: "text", text: "x".repeat(chars) }],
    createdAt: "",
  });
  const region = Array.from({ length: 40 }, (_, i) => msg(i + 1, i % 2 ? "assistant" : "user", 100));

  it("cuts at the first turn end whose foldable part passes the threshold", () => {
    // Tail 4: at end e the mark is e - 4 (a user message), foldable = 100 * (e - 4); > 1000 first at e = 16.
    expect(turnByTurnFoldLength(region, 4, 1000)).toBe(16);
  });

  it("takes the whole region when no earlier turn end passes it", () => {
    expect(turnByTurnFoldLength(region, 4, 100_000)).toBe(40);
  });
});
