// The in-turn compactor on an error result too large to fit (cut with its label, still an error)
// and on a result whose image the model has not seen yet (its text cut, the image kept).
import { describe, expect, it } from "vitest";
import { compactMessages } from "../../core/compactor";
import type { ContentBlock, ImageBlock, TextBlock, WireMessage } from "../../core/types";
import { blockAs, blocksIn } from "../blocks";

const budget = {
  contextWindowTokens: 24_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
const TARGET_CHARS = 22_000 * 0.5 * 1.5;
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const image: ImageBlock = { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } };
const text = (t: string): TextBlock => ({ type: "text", text: t });
const call = (id: string): ContentBlock => ({ type: "tool_use", id, name: "screen", input: { id } });
function origins(ms: WireMessage[]) {
  const refs = new Map<ContentBlock, { conversationId: string; messageId: string; block: number }>();
  ms.forEach((m, i) =>
    blocksIn(m).forEach((b, j) => refs.set(b, { conversationId: "conv_X", messageId: `msg_${i}`, block: j })),
  );
  return (b: ContentBlock) => refs.get(b);
}

describe("an error result in a compaction pass", () => {
  it("is cut like any protected result when it alone is larger than the target, and stays an error", () => {
    const ms: WireMessage[] = [
      { role: "user", content: [text("read it")] },
      { role: "assistant", content: [call("t1")] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "e".repeat(60_000), is_error: true }],
      },
    ];
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const cut = blockAs(blocksIn(messages[2])[0], "tool_result");
    expect(cut.is_error).toBe(true);
    expect(typeof cut.content).toBe("string");
    expect((cut.content as string).length).toBeLessThanOrEqual(Math.floor(TARGET_CHARS / 2));
    expect(cut.content).toContain(
      'conversation_read {"conversation_id":"conv_X","message_id":"msg_2","block":0} returns the original]',
    );
    expect(report.charsAfter).toBeLessThanOrEqual(TARGET_CHARS);
  });

  it("stays whole when it fits under the target", () => {
    const ms: WireMessage[] = [
      { role: "user", content: [text("read it")] },
      { role: "assistant", content: [call("t1")] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "e".repeat(9_000), is_error: true }],
      },
      { role: "assistant", content: [call("t2")] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "r".repeat(20_000) }] },
    ];
    const { messages } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    expect(messages[2]).toEqual(ms[2]);
  });
});

describe("an image the model has not seen", () => {
  it("stays in its result when the result's text is cut, and the label says so", () => {
    const ms: WireMessage[] = [{ role: "user", content: [text("look at four screens")] }];
    ms.push({ role: "assistant", content: [call("t1"), call("t2"), call("t3"), call("t4")] });
    ms.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: [text("a".repeat(12_000)), image] },
        ...["t2", "t3", "t4"].map(
          (id): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: id.repeat(3_000) }),
        ),
      ],
    });
    const { messages, report } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const first = blockAs(blocksIn(messages[2])[0], "tool_result");
    expect(report.targets.some((t) => t.index === 2 && t.block === 0 && t.kind === "tool_result")).toBe(true);
    const blocks = first.content as ContentBlock[];
    expect(blocks.filter((b) => b.type === "image")).toEqual([image]);
    const cutText = blockAs(blocks[0], "text").text;
    expect(cutText.length).toBeLessThan(12_000);
    expect(cutText).toContain("(its image is kept)");
    expect(cutText).toContain('conversation_read {"conversation_id":"conv_X","message_id":"msg_2","block":0}');
  });

  it("goes, with its label, once the model has looked at it", () => {
    const ms: WireMessage[] = [
      { role: "user", content: [text("look")] },
      { role: "assistant", content: [call("t1")] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: [text("a".repeat(12_000)), image] }],
      },
      { role: "assistant", content: [call("t2")] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "b".repeat(20_000) }] },
    ];
    const { messages } = compactMessages(ms, { fixedChars: 0, budget, originOf: origins(ms) });
    const first = blockAs(blocksIn(messages[2])[0], "tool_result");
    expect(JSON.stringify(first.content)).not.toContain(PNG);
    expect(JSON.stringify(first.content)).toContain("an image removed from this tool result");
  });
});
