// The visible-character rule of names (core/visible-text.ts): letters that show nothing (the Hangul
// fillers, the blank Braille pattern) are no visible character; the letters and patterns beside them are.
import { describe, expect, it } from "vitest";
import { VISIBLE, visibleText } from "../../core/visible-text";

const BLANK_LETTERS = ["\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"];

describe("VISIBLE", () => {
  it("does not count the Hangul fillers or the blank Braille pattern", () => {
    for (const c of BLANK_LETTERS) expect(VISIBLE.test(c), JSON.stringify(c)).toBe(false);
    expect(VISIBLE.test(BLANK_LETTERS.join(""))).toBe(false);
  });

  it("still counts the Hangul and Braille characters that show something", () => {
    for (const c of ["\u1100", "\u1161", "\u3131", "\uffa1", "\ud55c", "\u2801", "\u28ff", "a", "1", ".", "€"])
      expect(VISIBLE.test(c), JSON.stringify(c)).toBe(true);
  });
});

describe("visibleText", () => {
  it("refuses a name made only of blank letters, and takes one with something visible beside them", () => {
    const name = visibleText(100);
    for (const n of [...BLANK_LETTERS, "\u115f\u1160", "\u3164 \u2800"])
      expect(name.safeParse(n).success, JSON.stringify(n)).toBe(false);
    expect(name.safeParse("\u3164x").success).toBe(true);
    expect(name.safeParse("\ud55c\uae00").success).toBe(true);
  });
});
