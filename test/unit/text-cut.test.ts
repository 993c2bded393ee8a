// Every cut of text the platform makes by UTF-16 index keeps surrogate pairs whole: half of one is
// a lone surrogate, which the Messages API refuses on the request that carries it and on every
// later one that replays it.
import { describe, expect, it } from "vitest";
import { page } from "../../agent/tools/conversation-read";
import { compactMessages, fallbackTurnState } from "../../core/compactor";
import { capSummary, excerpt } from "../../core/fold";
import { stubText } from "../../core/stubs";
import { sliceWhole, tailWhole, wellFormedDeep, wholeAt } from "../../core/text-cut";
import { streamCall } from "../../agent/model-call";
import { makeClient } from "./offline-model-client";
import { chunkBodies, INDEX_CHUNK_CHARS } from "../../services/cortex/search-index";
import type { StoredMessage, WireMessage } from "../../core/types";

const emoji = "😀"; // two UTF-16 units

describe("cutting text", () => {
  it("moves a cut inside a surrogate pair back by one, and leaves every other cut alone", () => {
    const t = `a${emoji}b`; // a, high, low, b
    expect([0, 1, 2, 3, 4].map((at) => wholeAt(t, at))).toEqual([0, 1, 1, 3, 4]);
    expect(sliceWhole(t, 0, 2)).toBe("a");
    expect(sliceWhole(t, 2)).toBe(`${emoji}b`);
    expect(tailWhole(t, 2)).toBe("b");
    expect(tailWhole(t, 3)).toBe(`${emoji}b`);
  });

  it("gives well-formed text at every cut site, whatever the cut point", () => {
    const long = `x${emoji.repeat(30_000)}`;
    for (const max of [100, 101, 1_001]) {
      expect(excerpt(long, max).isWellFormed()).toBe(true);
      expect(capSummary(long, max).isWellFormed()).toBe(true);
    }
    expect(fallbackTurnState(long, [{ name: "t", input: { q: long } }]).isWellFormed()).toBe(true);
    const message: StoredMessage = {
      id: "msg_x",
      seq: 3,
      role: "user",
      createdAt: "2026-01-01T00:00:00Z",
      content: [],
    };
    const call = { type: "tool_use" as const, id: "toolu_1", name: "lookup", input: { q: `a${emoji.repeat(100)}` } };
    expect(stubText({ conversationId: "conv_x", message, blockIndex: 0, chars: 5000, call }).isWellFormed()).toBe(true);
  });

  it("pages conversation_read without splitting a pair: the pages join back to the text", () => {
    const text = `a${emoji.repeat(25_000)}`;
    const pages: string[] = [];
    for (let offset = 0; offset < text.length; ) {
      const out = page(text, { offset, what: "m", args: {} });
      const body = out.slice(out.indexOf("]\n") + 2);
      expect(body.isWellFormed()).toBe(true);
      pages.push(body);
      const next = /"offset":(\d+)/.exec(out);
      if (!next) break;
      offset = Number(next[1]);
    }
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.join("")).toBe(text);
  });

  it("leaves a compaction's truncations well-formed", () => {
    const big = emoji.repeat(20_000);
    const messages: WireMessage[] = [
      { role: "user", content: [{ type: "text", text: "go" }] },
      ...Array.from({ length: 5 }, (_, i): WireMessage[] => [
        { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "x", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: `t${i}`, content: `${i}${big}` }] },
      ]).flat(),
    ];
    const { messages: out, report } = compactMessages(messages, {
      fixedChars: 0,
      budget: {
        contextWindowTokens: 40_000,
        outputReserveTokens: 2_000,
        compactTriggerRatio: 0.75,
        compactTargetRatio: 0.5,
        charsPerToken: 1.5,
      },
      originOf: () => undefined,
    });
    expect(report.targets.length).toBeGreaterThan(0);
    // JSON.stringify writes a lone surrogate as an escape: none may appear.
    expect(JSON.stringify(out)).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
  });

  it("search index chunks: each whole, joined back to the body", () => {
    // A pair across the 20,000-char boundary: the first chunk ends before it.
    const body = `${"a".repeat(INDEX_CHUNK_CHARS - 1)}${emoji}${"b".repeat(INDEX_CHUNK_CHARS)}${emoji}`;
    const chunks = chunkBodies(body);
    expect(chunks.join("")).toBe(body);
    expect(chunks[0].length).toBe(INDEX_CHUNK_CHARS - 1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(INDEX_CHUNK_CHARS);
      expect(c.isWellFormed()).toBe(true);
    }
    expect(chunkBodies("")).toEqual([""]);
    expect(chunkBodies("x".repeat(INDEX_CHUNK_CHARS))).toHaveLength(1);
  });
});

describe("a request on its way out", () => {
  it("wellFormedDeep mends every lone surrogate, keys included, and returns what needs nothing as it is", () => {
    const clean = { a: ["x", { b: `y${emoji}` }], n: 1, t: true, z: null };
    expect(wellFormedDeep(clean)).toBe(clean);
    const broken = { a: ["x", { b: "y\ud83d", "k\udc00": 2 }], n: 1 };
    const mended = wellFormedDeep(broken);
    expect(mended).toEqual({ a: ["x", { b: "y\ufffd", "k\ufffd": 2 }], n: 1 });
    expect(JSON.stringify(mended).toLowerCase()).not.toMatch(/\\ud[89a-f]/);
    expect(broken.a[1]).toEqual({ b: "y\ud83d", "k\udc00": 2 });
  });

  it("a model call whose request holds half a character goes out, where the API would refuse it", async () => {
    const request = {
      model: "offline-200k",
      max_tokens: 256,
      system: [{ type: "text" as const, text: "sys" }],
      tools: [],
      messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "cut here \ud83d" }] }],
    };
    const refused = await makeClient()
      .messages.create(request)
      .then(
        () => null,
        (e: Error) => e.message,
      );
    expect(refused).toMatch(/surrogate/);
    const call = await streamCall({ client: makeClient(), request, turnId: "turn_1", emit: () => {} });
    expect(call.ok).toBe(true);
  });
});
