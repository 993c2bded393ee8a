// The window fit weighs thinking as the request sends it (core/stubs.ts fitToWindow): a thinking
// block the guard never sends (unknown to the platform: an imported reply's) weighs nothing, and a
// reply's thinking stops counting once a stub put in place at a later turn moved its prefix (the
// guard drops it then). Known thinking whose prefix holds still counts.
import { describe, expect, it } from "vitest";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest, windowBudgetChars } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { fitToWindow, isOversizedStub } from "../../core/stubs";
import type { ContentBlock, StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const BUDGET = 20_000;

type Draft = Pick<StoredMessage, "role" | "content">;
const history = (drafts: Draft[]): StoredMessage[] =>
  drafts.map((m, i) => ({ ...m, id: `msg_${i + 1}`, seq: i + 1, createdAt: "2026-01-01T00:00:00Z" }));
const ask = (text: string): Draft => ({ role: "user", content: [{ type: "text", text }] });
const reply = (text: string, thinkingChars = 0): Draft => ({
  role: "assistant",
  content: [
    ...(thinkingChars
      ? [{ type: "thinking", thinking: "t".repeat(thinkingChars - 200), signature: "s".repeat(200) } as ContentBlock]
      : []),
    { type: "text", text },
  ],
});
const fitWith = (ms: StoredMessage[], known: (b: ContentBlock) => boolean) =>
  fitToWindow(ms, {
    conversationId: "conv_X",
    fixedChars: 1_000,
    budgetChars: BUDGET,
    promptNext: false,
    knownThinking: known,
  });
const stubbedAt = (ms: readonly StoredMessage[]) =>
  ms.flatMap((m, i) => (m.content.some((b) => b.type === "text" && isOversizedStub(b.text)) ? [i] : []));

describe("the window fit and thinking", () => {
  it("(a) weighs nothing for thinking the request never sends: a history that fits without it is unchanged", () => {
    // 1,000 fixed + 15,000 of thinking + 5,000 of text: over the budget only with the thinking.
    const ms = history([ask("think about rivers"), reply(`RIVER ${"r".repeat(5_000)}`, 15_000), ask("and lakes?")]);
    const out = fitWith(ms, () => false);
    expect(out.stubbed).toBe(0);
    expect(out.omitted).toBeUndefined();
    expect(out.messages).toBe(ms);
  });

  it("(a) through the request: an imported reply's thinking does not stub nor hide the history", () => {
    const settings = defaultSettings(SONNET);
    const budget = windowBudgetChars(settings);
    // Thinking as large as the whole window, with no fingerprint (an import's): never sent.
    const ms = history([
      ask("think about rivers"),
      reply(`RIVER-REPLY ${"r".repeat(3_000)}`, budget),
      ask("and lakes?"),
    ]);
    const { request } = buildModelRequest({
      conversationId: "conv_X",
      settings,
      model: SONNET,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: ms,
    });
    const sent = JSON.stringify(request.messages);
    expect(sent).toContain(`RIVER-REPLY ${"r".repeat(3_000)}`);
    expect(sent).not.toContain("are not shown here");
    expect(sent).not.toContain("replaced by this stub to fit");
    expect(
      request.messages
        .flatMap((m) => (typeof m.content === "string" ? [] : m.content))
        .some((b) => b.type === "thinking"),
    ).toBe(false);
  });

  it("(b) stops counting a reply's thinking once a stub put in place at a later turn moved its prefix", () => {
    const ms = history([
      ask("first"),
      reply(`ONE ${"a".repeat(12_000)}`),
      ask("second"),
      // Produced at the prompt before it, with reply one whole: the stub put in at the third prompt drops it.
      reply("TWO short", 8_000),
      ask("third"),
      reply(`THREE ${"c".repeat(12_000)}`),
      ask("fourth"),
    ]);
    const out = fitWith(ms, () => true);
    // The third prompt's request overflowed (1,000 + 12,000 + 8,000 + …): reply one went as a stub,
    // and reply two's thinking with it. The fourth's then fits with reply three whole.
    expect(stubbedAt(out.messages)).toEqual([1]);
    expect(out.omitted).toBeUndefined();
    expect(out.messages[5]).toBe(ms[5]);
    expect(out.messages[3]).toBe(ms[3]);
  });

  it("(b, guard) keeps counting thinking produced after the stub was in place", () => {
    const ms = history([
      ask("first"),
      reply(`ONE ${"a".repeat(25_000)}`),
      ask("second"),
      // Produced with reply one already a stub (the second prompt's request overflowed): it goes back.
      reply("TWO short", 8_000),
      ask("third"),
      reply(`THREE ${"c".repeat(12_000)}`),
      ask("fourth"),
    ]);
    const out = fitWith(ms, () => true);
    expect(stubbedAt(out.messages)).toEqual([1, 5]);
  });

  it("(b) a pointer put in place drops the thinking of the replies it keeps: its cut counts them without it", () => {
    // Exchanges of 1,900-char texts (too small to stub), each reply with 3,000 chars of known thinking.
    const drafts: Draft[] = [];
    for (let k = 0; k < 4; k++)
      drafts.push(ask(`q${k} ${"q".repeat(1_896)}`), reply(`a${k} ${"a".repeat(1_896)}`, 3_000));
    const ms = history([...drafts, ask(`q4 ${"q".repeat(1_896)}`)]);
    const out = fitWith(ms, () => true);
    // The fourth prompt's request overflows: the pointer keeps the third exchange, its reply's thinking
    // dropped (its prefix moved), within half the window; the fourth reply's, produced after, counts.
    expect(out.omitted).toBe(4);
    expect(out.messages[2]).toBe(ms[4]);
    expect(out.messages.slice(2)).toEqual(ms.slice(4));
  });

  it("(c) counts known thinking whose prefix holds: a history that fits only without it is stubbed", () => {
    const ms = history([ask("think about rivers"), reply(`RIVER ${"r".repeat(5_000)}`, 15_000), ask("and lakes?")]);
    const out = fitWith(ms, () => true);
    expect(stubbedAt(out.messages)).toEqual([1]);
  });
});
