// A text may hold U+E000/U+E001 itself (the characters the index marks matches with until a snippet
// is cut): its hit keeps them as they are, never shown as brackets, and its real match is still
// listed in `matches` (GET /v1/search) and shown as `[match]` (memory_search).
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";
import { ofType } from "../blocks";

const toolText = (r: { text: string }) => {
  const c = ofType(turnMessages(r)[2].content[0], "tool_result").content;
  return typeof c === "string" ? c : c.map((b) => (b.type === "text" ? b.text : "")).join("\n");
};

describe("a text's own private-use marks in search hits", () => {
  it("GET /v1/search keeps them in the snippet and lists the real match", async () => {
    const key = await newTenant();
    await api("POST", "/v1/memory", { text: "logo \uE000corp\uE001 and the wombat" }, { key });
    const hit = (await api("GET", "/v1/search?q=wombat", undefined, { key })).json.data[0] as unknown as {
      snippet: string;
      matches: [number, number][];
    };
    expect(hit.snippet).toContain("\uE000corp\uE001");
    expect(hit.snippet).not.toContain("[corp]");
    // The note's title repeats its text: each "wombat" is a match, "corp" none.
    expect(hit.matches.length).toBeGreaterThan(0);
    for (const [start, end] of hit.matches) expect(hit.snippet.slice(start, end)).toBe("[wombat]");
  });

  it("memory_search shows only the real match as [match]", async () => {
    const key = await newTenant();
    await api("POST", "/v1/memory", { text: "logo \uE000corp\uE001 and the wombat" }, { key });
    const conv = await createConversation(undefined, key);
    const out = toolText(await send(conv, '@tool memory_search {"query":"wombat"}', key));
    expect(out).toContain("logo \uE000corp\uE001 and the [wombat]");
    expect(out).not.toContain("[corp]");
  });
});

describe("a hit found by meaning alone", () => {
  it("is shown as its text's start, its own marks and brackets kept, nothing listed as a match", async () => {
    const { shownSnippet } = await import("../../agent/tools/memory-search");
    const text = "see [1] and logo \uE000corp\uE001";
    expect(shownSnippet({ snippet: text })).toEqual({ snippet: text, matches: [] });
    const long = `${"w".repeat(299)}😀 \uE000tail\uE001`;
    const cut = shownSnippet({ snippet: long });
    expect(cut.snippet).toBe(`${"w".repeat(299)}…`);
    expect(cut.matches).toEqual([]);
  });
});
