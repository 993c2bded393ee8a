// Telling a text file's encoding: UTF-16 from its first bytes, Windows-1252 from UTF-8 that fails.
import { describe, expect, it } from "vitest";
import { Utf8Check, Utf8Tally, utf16Of } from "../../services/attachments/formats/text/encoding";
import { isProbablyText } from "../../services/attachments/formats/text/line-index";

const ascii16 = (text: string, le: boolean) =>
  Uint8Array.from([...text].flatMap((c) => (le ? [c.charCodeAt(0), 0] : [0, c.charCodeAt(0)])));

describe("text encodings", () => {
  it("UTF-16 is told by its mark or by every other byte being zero, and counts as text", () => {
    expect(utf16Of(Uint8Array.from([0xff, 0xfe, 0x41, 0]))).toBe("utf-16le");
    expect(utf16Of(Uint8Array.from([0xfe, 0xff, 0, 0x41]))).toBe("utf-16be");
    expect(utf16Of(Uint8Array.from([0xff, 0xfe, 0, 0, 0x41, 0, 0, 0]))).toBeNull(); // UTF-32's mark
    expect(utf16Of(ascii16("plain words here", true))).toBe("utf-16le");
    expect(utf16Of(ascii16("plain words here", false))).toBe("utf-16be");
    expect(utf16Of(new TextEncoder().encode("plain words here"))).toBeNull();
    expect(utf16Of(Uint8Array.from([0, 1, 2, 0, 255, 0, 7, 0]))).toBeNull();
    expect(isProbablyText(ascii16("a log line\n", true))).toBe(true);
    expect(isProbablyText(Uint8Array.from([0, 1, 2, 0, 255, 0]))).toBe(false);
  });

  it("a multi-byte character cut between two chunks is neither invalid UTF-8 nor miscounted", () => {
    const bytes = new TextEncoder().encode("ab日本c");
    const check = new Utf8Check();
    const tally = new Utf8Tally();
    for (const part of [bytes.subarray(0, 3), bytes.subarray(3, 6), bytes.subarray(6)]) {
      check.push(part);
      tally.push(part);
    }
    expect(check.valid()).toBe(true);
    expect(tally.finish()).toBe("utf-8");
    expect(tally.multibyte).toBe(2);
    expect(tally.invalid).toBe(0);
  });

  it("Windows-1252 has no well-formed sequences; damaged UTF-8 has more of them than bad bytes", () => {
    const latin = new Utf8Tally();
    latin.push(Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x0a]));
    expect(latin.finish()).toBe("windows-1252");
    const damaged = new Utf8Tally();
    damaged.push(new TextEncoder().encode("Grüße naïve "));
    damaged.push(Uint8Array.from([0xff]));
    expect(damaged.finish()).toBe("utf-8");
    const cutAtEnd = new Utf8Check();
    cutAtEnd.push(Uint8Array.from([0x61, 0xe6, 0x97]));
    expect(cutAtEnd.valid()).toBe(false);
  });
});
