import { describe, expect, it } from "vitest";
import { PART_CHARS, splitParts } from "../../durable-objects/conversation/conversation-store";

describe("splitParts (large messages in the object's SQLite)", () => {
  it("cuts into parts of at most PART_CHARS that join back to the text", () => {
    const text = "x".repeat(PART_CHARS * 2 + 7);
    const parts = splitParts(text);
    expect(parts.map((p) => p.length)).toEqual([PART_CHARS, PART_CHARS, 7]);
    expect(parts.join("")).toBe(text);
  });

  it("never cuts between the halves of a surrogate pair (SQLite would store a lone half as U+FFFD)", () => {
    const text = `${"a".repeat(PART_CHARS - 1)}😀${"b".repeat(10)}`;
    const parts = splitParts(text);
    expect(parts[0].length).toBe(PART_CHARS - 1);
    expect(parts[1].startsWith("😀")).toBe(true);
    expect(parts.join("")).toBe(text);
  });
});
