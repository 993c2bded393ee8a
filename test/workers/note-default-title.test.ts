// A note saved without a title takes its first line as one: that line must pass the title rule an
// explicit title does (workers/chat/validate.ts visibleName), or a stray "\r", a bidi override or
// a line of zero-width spaces would reach listings and the prompts' memory map.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, newTenant, send } from "./helpers";

describe("a note's default title", () => {
  it("is the first line still visible after the hidden-character rule, else a fixed word", async () => {
    const key = await newTenant();
    const cases: [string, string][] = [
      ["hello world\r\nsecond line", "hello world"],
      ["\u202Egnp.exe hello\nbody", "gnp.exe hello"],
      ["\u200B\nreal body", "real body"],
      ["  \u2028first\u2029second", "first"],
      ["tab\there\n", "tab here"],
      ["\u200B\u202E\n\u200B", "note"],
    ];
    for (const [text, title] of cases) {
      const created = await api("POST", "/v1/memory", { text }, { key });
      expect(created.status, JSON.stringify(text)).toBe(201);
      expect(created.json.title, JSON.stringify(text)).toBe(title);
      expect(created.json.text).toBe(text.trim());
    }
  });

  it("is the same for memory_save without a title", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await send(id, '@tool memory_save {"text":"\\u202Elocker code 4711\\r\\nmore"}', key);
    const notes = await eventually(async () => {
      const list = (await api("GET", "/v1/memory", undefined, { key })).json.data;
      return list.length ? list : null;
    });
    expect(notes.map((n) => n.title)).toEqual(["locker code 4711"]);
  });
});
