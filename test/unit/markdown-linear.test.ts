// The web UI's markdown (workers/chat/public/js/markdown.js) on text built to make a parser's work
// grow faster than its input: tens of thousands of delimiters never closed (`**a **a …`), long
// runs of "[", "<mailto:", spaces, backticks of growing length, a URL of unbalanced parentheses.
// They render as their literal text, and normal markdown renders as it did (no timing asserted:
// the reading is linear, and the inputs here took seconds each while it was not). Runs in Node
// on a small stand-in for the DOM, serialized like innerHTML.
import { beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, FakeElement, loadMarkdown, type Markdown } from "./fake-dom";

let md: Markdown;

beforeAll(async () => {
  md = await loadMarkdown();
});

const render = (text: string) => md.renderMarkdown(new FakeElement("div"), text).innerHTML;
const paragraph = (text: string) => `<p dir="auto">${escapeHtml(text.trim())}</p>`;

describe("markdown on hostile input", () => {
  it.each([
    ["strong", "**a ".repeat(32_000)],
    ["mixed delimiters", "**a ~~b *c __d ".repeat(8000)],
    ["emphasis", "*a ".repeat(32_000)],
    ["underscore emphasis", " _a".repeat(32_000)],
    ["link labels", "[".repeat(64_000)],
    ["link labels sharing one address", `${"[".repeat(30_000)}a](${"x".repeat(30_000)}`],
    ["autolinks", "<mailto:".repeat(16_000)],
    ["spaces before no line break", `a${" ".repeat(64_000)}b`],
    ["backticks of growing length", Array.from({ length: 300 }, (_, i) => `${"`".repeat(i + 1)}a`).join("")],
  ])("unclosed %s stay literal text", (_name, text) => {
    expect(render(text)).toBe(paragraph(text));
  });

  it("a bare URL with thousands of parentheses keeps only the ones it balances", () => {
    const url = `http://a${"(".repeat(30_000)}`;
    const html = render(`${url}${")".repeat(30_000)}`);
    const href = new URL(`${url}${")".repeat(30_000)}`).href;
    expect(html).toBe(
      `<p dir="auto"><a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${escapeHtml(url)}${")".repeat(30_000)}</a></p>`,
    );
  });

  it("a heading of thousands of spaces keeps its text", () => {
    const html = render(`# a${" ".repeat(30_000)}x  #`);
    expect(html === `<h2 class="md-h" dir="auto">a${" ".repeat(30_000)}x</h2>`).toBe(true);
  });

  it("nesting past 16 levels leaves the innermost text as text", () => {
    const deep = "__a ".repeat(40) + "_".repeat(80);
    const html = render(deep);
    expect(html.match(/<strong>/g)?.length).toBe(17);
    expect(html.startsWith('<p dir="auto"><strong>a <strong>a ')).toBe(true);
  });
});

describe("markdown as before", () => {
  it.each([
    [
      "**bold** and *emphasis* and ~~old~~",
      '<p dir="auto"><strong>bold</strong> and <em>emphasis</em> and <del>old</del></p>',
    ],
    ["***bold italic***", '<p dir="auto"><strong><em>bold italic</em></strong></p>'],
    ["Use *args or `**kwargs` in Python", '<p dir="auto">Use *args or <code>**kwargs</code> in Python</p>'],
    ["~~old `a~~b` new~~", '<p dir="auto"><del>old <code>a~~b</code> new</del></p>'],
    ["*see `x` here*", '<p dir="auto"><em>see <code>x</code> here</em></p>'],
    [
      "__strong__ and _em_ but snake_case_name",
      '<p dir="auto"><strong>strong</strong> and <em>em</em> but snake_case_name</p>',
    ],
    ["a ** b ** c and 2 * 3 * 4", '<p dir="auto">a ** b ** c and 2 * 3 * 4</p>'],
    ["**a *b* c**", '<p dir="auto"><strong>a <em>b</em> c</strong></p>'],
    ["`` a ` b `` and ``` x", '<p dir="auto"><code>a ` b</code> and ``` x</p>'],
    ["\\*not em\\* and a\\\nbreak  \nhere", '<p dir="auto">*not em* and a<br>break<br>here</p>'],
    [
      "See [the docs](https://example.com/docs) or [this](javascript:alert(1)) or <https://x.y/z>.",
      '<p dir="auto">See <a href="https://example.com/docs" target="_blank" rel="noopener noreferrer nofollow">the docs</a> or <span>this</span> or <a href="https://x.y/z" target="_blank" rel="noopener noreferrer nofollow">https://x.y/z</a>.</p>',
    ],
    [
      '[Foo](https://en.wikipedia.org/wiki/Foo_(bar) "t") and https://en.wikipedia.org/wiki/Foo_(bar).',
      '<p dir="auto"><a href="https://en.wikipedia.org/wiki/Foo_(bar)" target="_blank" rel="noopener noreferrer nofollow">Foo</a> and <a href="https://en.wikipedia.org/wiki/Foo_(bar)" target="_blank" rel="noopener noreferrer nofollow">https://en.wikipedia.org/wiki/Foo_(bar)</a>.</p>',
    ],
    [
      "<mailto:a@b.c> (see https://example.com/a)",
      '<p dir="auto"><a href="mailto:a@b.c" target="_blank" rel="noopener noreferrer nofollow">a@b.c</a> (see <a href="https://example.com/a" target="_blank" rel="noopener noreferrer nofollow">https://example.com/a</a>)</p>',
    ],
    ["## Learning C#", '<h3 class="md-h" dir="auto">Learning C#</h3>'],
    ["## Closed heading ##", '<h3 class="md-h" dir="auto">Closed heading</h3>'],
    ["a private-use \uE0007\uE001 pair stays text", '<p dir="auto">a private-use \uE0007\uE001 pair stays text</p>'],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});
