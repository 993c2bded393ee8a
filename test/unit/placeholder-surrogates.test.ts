// The placeholders that stand in for a left-out image or result name the call that brings it back,
// its input cut short: the cut never splits a surrogate pair, so /replay and the prompt snapshot
// show the very bytes the model is sent (model-call.ts would otherwise swap a lone half for U+FFFD).
import { describe, expect, it } from "vitest";
import { imagePlaceholder, resultStub } from "../../core/request-placeholders";
import type { ImageBlock, ToolUseBlock } from "../../core/types";

// JSON.stringify(input) is {"q":"aaa…😀…}: 6 chars, 153 a's, then the emoji's high surrogate at index 159.
const call: ToolUseBlock = {
  type: "tool_use",
  id: "toolu_1",
  name: "image_view",
  input: { q: `${"a".repeat(153)}😀 more words` },
};
const image: ImageBlock = { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } };

describe("placeholders cut a call's input between whole characters", () => {
  it("the cut falls on the emoji's first half", () => {
    expect(JSON.stringify(call.input).charCodeAt(159)).toBe(0xd83d);
  });

  it("an image placeholder is well-formed", () => {
    const text = imagePlaceholder(image, { info: null, reason: "count", limit: 100, call });
    expect(text).toContain("image_view {");
    expect(text.isWellFormed()).toBe(true);
  });

  it("a result stub is well-formed", () => {
    const text = resultStub(40_000_000, { call, where: null, conversationId: undefined });
    expect(text).toContain("image_view {");
    expect(text.isWellFormed()).toBe(true);
  });
});
