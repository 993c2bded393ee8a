// A fold never un-stubs: the tail it leaves keeps the stubs in force when it committed
// (ConversationHead.stubbedThroughMessage), so the prefix moves once, at the fold, not again a few
// turns on when the tail's own batching stubs the same result a second time.
import { describe, expect, it } from "vitest";
import { chooseFoldMark } from "../../core/fold";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { stubbedThroughSeq, stubWatermark } from "../../core/stubs";
import type { ContentBlock, StoredMessage, WireMessage } from "../../core/types";
import { toolResults } from "../blocks";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const settings = defaultSettings();

function conversation() {
  const all: StoredMessage[] = [];
  const push = (role: "user" | "assistant", ...content: ContentBlock[]) =>
    all.push({ id: `msg_${all.length + 1}`, seq: all.length + 1, role, content, createdAt: "2026-01-01T00:00:00Z" });
  const chat = (n: number) => {
    push("user", { type: "text", text: `question ${n}` });
    push("assistant", { type: "text", text: `answer ${n}` });
  };
  const tool = (n: number) => {
    push("user", { type: "text", text: `read file ${n}` });
    push("assistant", { type: "tool_use", id: `toolu_${n}`, name: "file_read", input: { attachment_id: `att_${n}` } });
    push("user", { type: "tool_result", tool_use_id: `toolu_${n}`, content: `${n}`.repeat(3_000) });
    push("assistant", { type: "text", text: `file ${n} read` });
  };
  for (let n = 1; n <= 4; n++) chat(n);
  tool(1);
  tool(2);
  chat(5);
  chat(6);
  push("user", { type: "text", text: "question 7" });
  return { all, push };
}

const build = (history: readonly StoredMessage[], extra: { summary?: boolean; stubbedThrough?: number } = {}) =>
  buildModelRequest({
    conversationId: "conv_F",
    settings,
    model: SONNET,
    system: [{ type: "text", text: "system" }],
    tools: [],
    history,
    summary: extra.summary ? { summary: "the first twelve messages", throughSeq: history[0].seq - 1 } : null,
    stubbedThrough: extra.stubbedThrough,
  }).request;

const isStub = (content: unknown) => typeof content === "string" && content.startsWith("[stale tool result");
const stubbedIds = (messages: WireMessage[]) =>
  toolResults(messages)
    .filter((b) => isStub(b.content))
    .map((b) => b.tool_use_id);

/** The request's messages as bytes, without its cache breakpoints (which move with the last message by design). */
const bytes = (messages: WireMessage[]) =>
  JSON.stringify(messages, (k, v: unknown) => (k === "cache_control" ? undefined : v));

describe("stubs across a fold", () => {
  it("keeps a result stubbed before the fold stubbed after it, and the prefix still for the next 4 turns", () => {
    const { all, push } = conversation();
    expect(stubbedIds(build(all).messages)).toEqual(["toolu_1", "toolu_2"]);

    const mark = chooseFoldMark(all, settings.tailMessages)!;
    expect(all[mark].seq).toBe(13);
    // What the commit records, over the thread up to it.
    const stubbedThrough = stubbedThroughSeq(all, settings);
    expect(stubbedThrough).toBe(all[stubWatermark(all, settings) - 1].seq);
    expect(stubbedThrough).toBeGreaterThanOrEqual(15);

    const tail = () => all.filter((m) => m.seq >= 13);
    const first = build(tail(), { summary: true, stubbedThrough }).messages;
    expect(stubbedIds(first)).toEqual(["toolu_2"]);
    expect(bytes(first)).not.toContain("2".repeat(3_000));

    // The next 4 turns: everything before each turn's new prompt is the request before, byte for byte.
    let before = first;
    for (let turn = 8; turn <= 11; turn++) {
      push("assistant", { type: "text", text: `answer ${turn - 1}` });
      push("user", { type: "text", text: `question ${turn}` });
      const next = build(tail(), { summary: true, stubbedThrough }).messages;
      expect(stubbedIds(next)).toEqual(["toolu_2"]);
      expect(bytes(next.slice(0, before.length - 1))).toBe(bytes(before.slice(0, -1)));
      before = next;
    }
  });

  it("is the same request every time for the same history and head", () => {
    const { all } = conversation();
    const stubbedThrough = stubbedThroughSeq(all, settings);
    const tail = all.filter((m) => m.seq >= 13);
    expect(bytes(build(tail, { summary: true, stubbedThrough }).messages)).toBe(
      bytes(build(tail, { summary: true, stubbedThrough }).messages),
    );
  });

  it("without the head's field, a tail stubs as it did (an older head)", () => {
    const { all } = conversation();
    const tail = all.filter((m) => m.seq >= 13);
    expect(stubbedIds(build(tail, { summary: true }).messages)).toEqual([]);
    expect(stubWatermark(tail, { ...settings, stubbedThrough: undefined })).toBe(stubWatermark(tail, settings));
  });

  it("never records less than the floor a previous fold left", () => {
    const { all } = conversation();
    const tail = all.filter((m) => m.seq >= 17);
    expect(stubbedThroughSeq(tail, { ...settings, stubbedThrough: 15 })).toBe(15);
  });
});
