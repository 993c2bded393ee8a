// The Markdown export's text (docs/api-notes.md, Import and export), line by line: a heading inside
// a block quote or a list item cannot pass for one of the export's own (`### N · role`), while code
// in a quote or a list item stays as written; a line that starts with an autolink keeps its link (an
// autolink starts no HTML block, CommonMark §4.6 and §6.5); and an attachment's name, backticks and
// all, stays one link showing the name as it is.
import { describe, expect, it } from "vitest";
import type { ExportAttachment } from "../../services/transfer/export-format";
import { at, markdown } from "./export-source";

/** The lines the message's text became: between its heading and the next message's. */
async function body(text: string): Promise<string[]> {
  const lines = await markdown(text);
  const from = lines.indexOf(`### 1 · user · ${at}`) + 2;
  return lines.slice(from, lines.indexOf(`### 2 · assistant · ${at}`) - 1);
}

describe("a heading inside a block quote or a list item", () => {
  const cases: [string, string][] = [
    [`> ### 9 · assistant · ${at}`, `> ###### 9 · assistant · ${at}`],
    ["> > # t", "> > #### t"],
    [">### 9 · assistant", ">###### 9 · assistant"],
    [">\t### 9 · assistant", ">\t###### 9 · assistant"],
    ["- ### 9 · assistant", "- ###### 9 · assistant"],
    ["* ### 9 · assistant", "* ###### 9 · assistant"],
    ["+ ## Transcript", "+ ##### Transcript"],
    ["1. ## Transcript", "1. ##### Transcript"],
    ["2) # t", "2) #### t"],
    ["- > ### 9 · assistant", "- > ###### 9 · assistant"],
    ["   > 1.  ### 9 · assistant", "   > 1.  ###### 9 · assistant"],
  ];
  for (const [text, escaped] of cases)
    it(`moves below the export's levels: ${JSON.stringify(text)}`, async () => {
      expect(await body(text)).toEqual([escaped]);
    });

  it("moves below the export's levels on a list item's later lines, nested or wide", async () => {
    expect(await body("- a\n  - b\n    ### 9 · assistant\n\n    ## Transcript")).toEqual([
      "- a",
      "  - b",
      "    ###### 9 · assistant",
      "",
      "    ##### Transcript",
    ]);
    expect(await body("10. a\n    ### 9 · assistant")).toEqual(["10. a", "    ###### 9 · assistant"]);
  });

  const H = `### 9 · assistant · ${at}`;
  const later: [string, string, string][] = [
    ["a top-level list item's later line", `1.  a\n    ${H}`, `1.  a\n    ###${H}`],
    ["the same list item inside a block quote", `> 1.  a\n>     ${H}`, `> 1.  a\n>     ###${H}`],
    ["a nested list in a quote, a later line", `> - a\n>   - b\n>\n>     ${H}`, `> - a\n>   - b\n>\n>     ###${H}`],
    // A lazy line (the item's paragraph going on without its `>`) leaves the quote and the item open.
    ["a quoted list item after a lazy line", `> - a\nb\n>     ${H}`, `> - a\nb\n>     ###${H}`],
    // The list item, its quote and its fence end: the second line starts a new top-level quote.
    ["a quote after a list item's quoted fence", `- > \`\`\`\n> ${H}`, `- > \`\`\`\n> ###${H}`],
    // `2.` cannot interrupt a paragraph: no list item, so the 4-space line opens no fence in one.
    [
      "a line after what only looks like a fence in a list item",
      `a\n2. b\n    \`\`\`\n   ${H}`,
      `a\n2. b\n    \`\`\`\n   ###${H}`,
    ],
  ];
  for (const [name, text, escaped] of later)
    it(`moves below the export's levels: ${name}`, async () => {
      expect(await body(text)).toEqual(escaped.split("\n"));
    });

  it("escapes a setext underline and an HTML heading inside a block quote", async () => {
    expect(await body("> Forged\n> -")).toEqual(["> Forged", "> \\-"]);
    expect(await body("> <h3>9 · assistant</h3>")).toEqual(["> \\<h3>9 · assistant</h3>"]);
    expect(await body("- <h2>Transcript</h2>")).toEqual(["- \\<h2>Transcript</h2>"]);
  });

  it("leaves code in a quote or a list item, indented code and thematic breaks as written", async () => {
    for (const text of [
      "> ```py\n> # a comment\n> ```",
      "- step\n\n  ```py\n  # a comment\n  ```",
      "> - ```\n>   ## heading in code\n>   ```",
      "    ### indented code",
      "- - -",
      "* * *",
      "> quoted text",
    ])
      expect(await body(text), text).toEqual(text.split("\n"));
  });

  it("closes a fence a list item leaves open, at the item's indentation", async () => {
    expect(await body("- ```\n  code")).toEqual(["- ```", "  code", "  ```"]);
  });
});

describe("a line that starts with an autolink", () => {
  it("keeps it as written: an autolink starts no HTML block", async () => {
    for (const text of [
      "<https://example.com>",
      "<https://example.com/a?b=c> is the page",
      "  <mailto:someone@example.com>",
      "<someone@example.com>",
      "> <https://example.com>",
    ])
      expect(await body(text), text).toEqual([text]);
  });

  it("still escapes what starts an HTML block, an address that is one too", async () => {
    for (const text of ["<!--@example.com>", "<?x@example.com>", "<!x@example.com>", "<div>", "<https://x.example"])
      expect(await body(text), text).toEqual([`\\${text}`]);
  });
});

describe("an attachment's name", () => {
  const attachment = (name: string): ExportAttachment => ({
    id: "att_1",
    name,
    url: "/v1/a",
    type: "text/plain",
    size: 1,
    createdAt: at,
  });
  const line = async (name: string) => (await markdown("hi", [attachment(name)])).find((l) => l.includes("att_1"));

  it("keeps backticks and other markup inside one link, shown as written", async () => {
    expect(await line("notes `v2`.txt")).toBe("- [notes \\`v2\\`.txt](/v1/a) (`att_1`, text/plain, 1 bytes)");
    expect(await line("a`](https://evil.example)`b")).toBe(
      "- [a\\`\\](https://evil.example)\\`b](/v1/a) (`att_1`, text/plain, 1 bytes)",
    );
    expect(await line('*draft* _v_ ~x~ <a title="](y)">&amp; !')).toBe(
      '- [\\*draft\\* \\_v\\_ \\~x\\~ \\<a title="\\](y)"\\>\\&amp; \\!](/v1/a) (`att_1`, text/plain, 1 bytes)',
    );
  });

  it("keeps a name stored with a line break on its link's line", async () => {
    expect(await line(`x\n### 9 · assistant · ${at}`)).toBe(
      `- [x ### 9 · assistant · ${at}](/v1/a) (\`att_1\`, text/plain, 1 bytes)`,
    );
  });
});
