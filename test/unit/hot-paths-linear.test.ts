// Five paths that cost superlinear CPU in the size of their input (a CPU review measured them), made
// linear with the same outputs: merging a run of same-role messages (replay and the thinking guard),
// the token counter's memo past 2,000 long strings, the offline model's thinking-chain check, its
// sentence splitter and its title's trailing punctuation. Their speed is `npm run bench:hot-paths`'s
// to show (never a timed test); these pin that the outputs did not change, each against the old
// code's rule, and, for the memo, the work left over when the same strings are counted again.
import { Tiktoken } from "js-tiktoken/lite";
import { describe, expect, it, vi } from "vitest";
import { extendPrefix, prefixHex, startPrefix, walkPrefix } from "../../core/offline-model/binding";
import { stripDirectives } from "../../core/offline-model/directives";
import { resolveModel } from "../../core/offline-model/model";
import { sentences } from "../../core/offline-model/summarize";
import { checkThinking } from "../../core/offline-model/thinking-check";
import {
  openThinking,
  sealThinking,
  type ThinkingSeal,
  textHash,
  thinkingId,
  thinkingIdOf,
} from "../../core/offline-model/thinking-seal";
import { offlineTitle } from "../../core/offline-model/title";
import type { WireBlock, WireRequest } from "../../core/offline-model/wire";
import { toWireMessages } from "../../core/replay";
import { CONTINUE_PROMPT } from "../../core/replay-rules";
import { keepValidThinking } from "../../core/thinking-guard";
import { countRequestTokens, countTokens } from "../../core/tokens";
import type { ContentBlock, ModelRequest, StoredMessage, WireMessage } from "../../core/types";

/** A seeded generator (mulberry32), so every corpus is the same on every run. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(items.length)] };
}

const words = "context window token budget summary history message turn reply archive search index cache prefix".split(
  " ",
);
const prose = (n: number, seed: number) => {
  let s = "";
  let i = seed;
  while (s.length < n) s += `${words[((i = (i * 1103515245 + 12345) >>> 0)) % 14]}${i % 7 === 0 ? ". " : " "}`;
  return s.slice(0, n);
};

/** Freezes what a caller hands in, so a merge that pushed into a caller's array would throw. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

describe("merging runs of same-role messages", () => {
  const stored = (
    seq: number,
    role: "user" | "assistant",
    { content, stopReason }: { content: ContentBlock[]; stopReason?: string },
  ) =>
    ({
      id: `msg_${String(seq).padStart(26, "0")}`,
      seq,
      role,
      content,
      createdAt: "2026-01-01T00:00:00Z",
      ...(stopReason ? { stopReason } : {}),
    }) as StoredMessage;

  /** toWireMessages as it was, for histories of text alone: each merge a new array of both. */
  function oldTextReplay(history: readonly StoredMessage[]): WireMessage[] {
    const out: { role: "user" | "assistant"; content: ContentBlock[] }[] = [];
    const push = (role: "user" | "assistant", content: readonly ContentBlock[]) => {
      const prev = out[out.length - 1];
      if (prev && prev.role === role) prev.content = [...prev.content, ...content];
      else out.push({ role, content: [...content] });
    };
    history.forEach((m, i) => {
      push(m.role, m.content);
      const next = history[i + 1];
      if (m.role === "assistant" && m.stopReason === "max_tokens" && (!next || next.role === "assistant"))
        push("user", [{ type: "text", text: CONTINUE_PROMPT }]);
    });
    while (out.length && out[0].role !== "user") out.shift();
    return out.filter((m) => m.content.length);
  }

  it("replays runs of lone prompts and replies as the old merge did, the stored messages untouched", () => {
    const rng = random(7);
    for (let round = 0; round < 200; round++) {
      const history: StoredMessage[] = [];
      const length = 1 + rng.int(round < 190 ? 40 : 3_000);
      for (let seq = 1; seq <= length; seq++) {
        const role = rng.next() < 0.6 ? "user" : "assistant";
        const blocks = Array.from({ length: 1 + rng.int(3) }, (_, k) => ({
          type: "text" as const,
          text: `${role} ${seq}.${k} ${rng.pick(words)}`,
        }));
        const stop = role === "assistant" ? rng.pick([undefined, "end_turn", "max_tokens"]) : undefined;
        history.push(stored(seq, role, { content: blocks, stopReason: stop }));
      }
      const before = JSON.stringify(history);
      deepFreeze(history);
      expect(JSON.stringify(toWireMessages(history)), `round ${round}`).toBe(JSON.stringify(oldTextReplay(history)));
      expect(JSON.stringify(history)).toBe(before);
    }
  });

  it("sends the thinking guard's merged messages as the old merge did, the request untouched", () => {
    const text = (t: string): ContentBlock => ({ type: "text", text: t });
    const think = (sig: string): ContentBlock => ({ type: "thinking", thinking: "", signature: sig });
    const blocksOf = (m: WireMessage): ContentBlock[] =>
      typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    /** keepValidThinking as it was when no thinking block is known (every one is left out). */
    const oldDropAll = (request: ModelRequest): ModelRequest => {
      if (!request.messages.some((m) => blocksOf(m).some((b) => b.type === "thinking"))) return request;
      const messages: WireMessage[] = [];
      for (const m of request.messages) {
        const content = blocksOf(m).filter((b) => b.type !== "thinking");
        if (!content.length) continue;
        const prev = messages[messages.length - 1];
        if (prev && prev.role === m.role)
          messages[messages.length - 1] = { ...prev, content: [...blocksOf(prev), ...content] };
        else
          messages.push(content.length === blocksOf(m).length && typeof m.content !== "string" ? m : { ...m, content });
      }
      return { ...request, messages };
    };
    const rng = random(11);
    for (let round = 0; round < 200; round++) {
      const messages: WireMessage[] = [];
      const length = 1 + rng.int(round < 190 ? 30 : 3_000);
      for (let i = 0; i < length; i++) {
        const role = rng.next() < 0.5 ? "user" : "assistant";
        const blocks = Array.from({ length: rng.int(4) }, (_, k) =>
          role === "assistant" && rng.next() < 0.5 ? think(`s${i}.${k}`) : text(`${role} ${i}.${k}`),
        );
        const extra = rng.next() < 0.2 ? { note: i } : {};
        messages.push(
          rng.next() < 0.15
            ? { role, content: `${role} ${i} as a string`, ...extra }
            : { role, content: blocks, ...extra },
        );
      }
      const request: ModelRequest = {
        model: "m",
        max_tokens: 10,
        system: [{ type: "text", text: "sys" }],
        tools: [],
        messages,
      };
      const before = JSON.stringify(request);
      deepFreeze(request);
      const expected = oldDropAll(request);
      const got = keepValidThinking(request, new Map());
      expect(JSON.stringify(got), `round ${round}`).toBe(JSON.stringify(expected));
      expect(got === request).toBe(expected === request);
      expect(JSON.stringify(request)).toBe(before);
    }
  });
});

describe("the token counter's memo", () => {
  /** Strings as countTokens receives them, pieced: how many of 256+ characters went to the BPE. */
  function longEncodes(run: () => void): number {
    const encode = vi.spyOn(Tiktoken.prototype, "encode");
    try {
      run();
      return encode.mock.calls.filter(([text]) => text.length >= 256).length;
    } finally {
      encode.mockRestore();
    }
  }

  it("counts more than 2,000 long strings a second time without encoding any of them again", () => {
    const texts = Array.from({ length: 2_200 }, (_, i) => `memo-cycle ${i}: ${prose(260 + (i % 200), i)}`);
    expect(longEncodes(() => texts.forEach((t) => countTokens(t)))).toBe(2_200);
    expect(longEncodes(() => texts.forEach((t) => countTokens(t)))).toBe(0);
  });

  it("counts a 2,500-step tool loop's request again (the offline model counts each one three times) without encoding its results again", () => {
    const messages: WireMessage[] = [{ role: "user", content: [{ type: "text", text: "do it" }] }];
    for (let i = 0; i < 2_500; i++) {
      const id = `toolu_memo_${i}`;
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id, name: "file_read", input: { path: `/f${i}` } }],
      });
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: `loop ${i} ${prose(500, i)}` }],
      });
    }
    const request = { system: [{ type: "text", text: "sys" }], tools: [], messages };
    const first = countRequestTokens(request);
    let again = 0;
    expect(longEncodes(() => (again = countRequestTokens(request)))).toBe(0);
    expect(again).toBe(first);
  });

  it("keys strings of 256 to 2,048 characters by hash without confusing two of equal length", () => {
    const spaced = "ab ".repeat(200);
    const dense = "abc".repeat(200);
    const first = countTokens(spaced);
    expect(countTokens(dense)).not.toBe(first);
    expect(countTokens(spaced)).toBe(first);
    expect(countTokens(" word".repeat(100))).toBe(100);
  });
});

describe("the offline model's thinking chain check", () => {
  const model = resolveModel("offline-2000k");
  const system = [{ type: "text", text: "sys" }];

  /** checkThinking's binding check as it was: each block's prefix, and its chain walked block by block. */
  function oldBindingFault(request: WireRequest): string | null {
    const sent: { key: string; seal: ThinkingSeal; id: string }[] = [];
    request.messages.forEach((m, i) =>
      (m.content as WireBlock[]).forEach((block, j) => {
        if (block.type === "thinking")
          sent.push({ key: `${i}.${j}`, seal: openThinking(block)!, id: thinkingId(block) });
      }),
    );
    const chainHolds = (before: typeof sent, seal: ThinkingSeal) => {
      if (seal.q === "") return before.length === 0;
      if (before.length === 0) return true;
      if (before[before.length - 1].id !== seal.q) return false;
      for (let k = 1; k < before.length; k++) if (before[k].seal.q !== before[k - 1].id) return false;
      return before.findIndex((entry) => entry.id === seal.r) <= 0;
    };
    const walk = walkPrefix(request);
    for (const [n, entry] of sent.entries()) {
      if (entry.seal.b !== 1) continue;
      if (walk.before.get(entry.key) !== entry.seal.p || !chainHolds(sent.slice(0, n), entry.seal))
        return `messages.${entry.key.replace(".", ".content.")}: Invalid \`signature\``;
    }
    return null;
  }

  /**
   * A conversation whose client leaves thinking blocks out between calls (and sometimes puts one
   * back), each reply sealed on the chain it was sent (some by a model that does not bind its blocks,
   * whose blocks are chained on but not checked), then the last request with one more such edit and,
   * sometimes, one block moved or copied to a later message.
   */
  function editedConversation(seed: number) {
    const rng = random(seed);
    type Reply = { blocks: { id: string; block: WireBlock }[]; texts: WireBlock[] };
    const turns: { prompt: WireBlock; reply: Reply }[] = [];
    const present = new Set<string>();
    const everySent: string[] = [];
    let state = startPrefix({ system, tools: [] } as unknown as WireRequest);
    const order = () => turns.flatMap((t) => t.reply.blocks.map((b) => b.id)).filter((id) => present.has(id));
    // Left out from the start or the end (valid), from the middle (a gap), or one put back.
    const edit = () => {
      const now = order();
      const kind = rng.next();
      if (kind < 0.15) for (const id of now.slice(0, 1 + rng.int(2))) present.delete(id);
      else if (kind < 0.25) for (const id of now.slice(-1)) present.delete(id);
      else if (kind < 0.32 && now.length > 2) present.delete(now[1 + rng.int(now.length - 2)]);
      else if (kind < 0.4 && everySent.length) present.add(rng.pick(everySent));
    };
    const pairs = 2 + rng.int(10);
    for (let k = 0; k < pairs; k++) {
      const prompt: WireBlock = { type: "text", text: `q${seed}.${k}` };
      state = extendPrefix(state, "user", prompt);
      if (k > 0) edit();
      const chain = order();
      let previous = chain[chain.length - 1] ?? "";
      let root = chain[0] ?? "";
      const count = 1 + rng.int(2);
      const bound = rng.next() < 0.75 ? 1 : 0;
      const reply: Reply = { blocks: [], texts: [] };
      for (let x = 0; x < count; x++) {
        const signature = sealThinking({
          k: "t",
          m: "claude-sonnet-5-5",
          b: bound,
          h: textHash("t"),
          n: 5,
          p: prefixHex(state),
          q: previous,
          r: root,
          i: `r${seed}.${k}`,
          x,
          c: count,
        });
        const id = thinkingIdOf(signature);
        reply.blocks.push({ id, block: { type: "thinking", thinking: "t", signature } });
        const answer: WireBlock = { type: "text", text: `a${seed}.${k}.${x}` };
        reply.texts.push(answer);
        state = extendPrefix(state, "assistant", answer);
        present.add(id);
        everySent.push(id);
        previous = id;
        root ||= id;
      }
      turns.push({ prompt, reply });
    }
    edit();
    // The latest reply's thinking goes back whole or not at all (partly is a different 400).
    const latest = turns[turns.length - 1].reply.blocks;
    const keepLatest = rng.next() < 0.7;
    for (const { id } of latest) keepLatest ? present.add(id) : present.delete(id);
    const messages = turns.flatMap(({ prompt, reply }) => [
      { role: "user", content: [prompt] },
      {
        role: "assistant",
        content: reply.blocks.flatMap(({ id, block }, x) => [...(present.has(id) ? [block] : []), reply.texts[x]]),
      },
    ]);
    // A block moved or copied to a later message (before the latest): its own prefix no longer
    // matches there, and the blocks between its two places find it before them or not.
    const earlier = turns
      .slice(0, -2)
      .flatMap((t) => t.reply.blocks)
      .filter(({ id }) => present.has(id));
    if (earlier.length && rng.next() < 0.3) {
      const moved = rng.pick(earlier);
      const from = messages.find((m) => m.content.includes(moved.block));
      const to = messages[2 * (turns.length - 2) + 1];
      if (from && from !== to) {
        if (rng.next() < 0.5) from.content = from.content.filter((b) => b !== moved.block);
        to.content = [...to.content, moved.block];
      }
    }
    messages.push({ role: "user", content: [{ type: "text", text: "next" }] });
    return { model: "offline-2000k", max_tokens: 100, system, messages } as unknown as WireRequest;
  }

  it("accepts and refuses the same requests as the block-by-block walk did", () => {
    if (!model) throw new Error("offline-2000k is not an offline model");
    let refused = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const request = editedConversation(seed);
      const fault = oldBindingFault(request);
      let got: string | null = null;
      try {
        checkThinking(request, model);
      } catch (error) {
        got = (error as Error).message;
      }
      if (fault === null) expect(got, `seed ${seed}`).toBeNull();
      else {
        refused++;
        expect(got, `seed ${seed}`).toContain(fault);
        expect(got).toContain("bound to a different conversation");
      }
    }
    // Both outcomes are exercised, not only one of them.
    expect(refused).toBeGreaterThan(40);
    expect(refused).toBeLessThan(360);
  });
});

/** Text of words, spaces, newlines, runs of sentence ends and of the title's trailing characters. */
function mixedText(rng: ReturnType<typeof random>): string {
  const parts = [
    () => rng.pick(words),
    () => rng.pick(["ledger.csv", "3.14", "e.g.", "v1.2.3", "Mr.", "ok?!", "…", "😀", "é", "x", "A"]),
    () => " ".repeat(1 + rng.int(3)),
    () => rng.pick(["\n", "\n\n", "\t", "\r\n", "\u00a0", "\u2028", " \n "]),
    () => rng.pick([".", "!", "?"]).repeat(1 + rng.int(rng.next() < 0.1 ? 300 : 4)),
    () =>
      Array.from({ length: 1 + rng.int(6) }, () =>
        rng.pick([".", ",", ";", ":", "!", "?", '"', "'", "`", "*", "_", "#", "-", " "]),
      ).join(""),
  ];
  let text = "";
  const length = rng.int(40);
  for (let k = 0; k < length; k++) text += rng.pick(parts)();
  return text;
}

describe("the offline model's sentence splitter", () => {
  const oldSentences = (text: string) =>
    (
      text
        .replace(/\s+/g, " ")
        .trim()
        .match(/\S.*?[.!?]+(?=\s|$)|\S.*$/g) ?? []
    )
      .map((s) => s.trim())
      .filter(Boolean);

  it("splits every text of a varied corpus as the old regex did", () => {
    const rng = random(3);
    const corpus = [
      "",
      " ",
      "a",
      ".",
      "!!",
      "a.",
      ".a",
      "a. b",
      "!!! x",
      "!x",
      "Hello world. How are you?",
      "ledger.csv was read. 3.14 is pi!",
      `Hello ${".".repeat(2_000)}x`,
      `Hello ${"!".repeat(2_000)}x and then. more`,
      `${"?".repeat(500)}`,
      "a\u2028b. c",
    ];
    for (let k = 0; k < 5_000; k++) corpus.push(mixedText(rng));
    for (const text of corpus) expect(sentences(text), JSON.stringify(text)).toEqual(oldSentences(text));
  });
});

describe("the offline model's title", () => {
  /** offlineTitle as it was for one user message: its trailing run cut by the regex. */
  const oldTitle = (text: string) => {
    const title = stripDirectives(text)
      .replace(/\s+/g, " ")
      .trim()
      .split(" ")
      .filter(Boolean)
      .slice(0, 6)
      .join(" ")
      .replace(/[\s.,;:!?"'`*_#-]+$/, "")
      .replace(/^[\s"'`*_#-]+/, "");
    return title === "" ? "Untitled" : title[0].toUpperCase() + title.slice(1);
  };

  it("titles every text of a varied corpus as the old regex did", () => {
    const rng = random(5);
    const corpus = [
      "",
      "-",
      "a-",
      "a -b",
      "--a--",
      "Fix this: the build.",
      `a${"-".repeat(2_000)}b`,
      `Fix this: a${"_".repeat(2_000)}b`,
      `a${"_".repeat(2_000)}`,
      "what? 😀!",
      "one two three four five six seven...",
    ];
    for (let k = 0; k < 5_000; k++) corpus.push(mixedText(rng));
    for (const text of corpus)
      expect(offlineTitle({ messages: [{ role: "user", content: text }] }), JSON.stringify(text)).toBe(oldTitle(text));
  });
});
