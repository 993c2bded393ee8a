// The web UI's markdown (workers/chat/public/js/markdown.js): CommonMark's setext headings (a
// paragraph's lines with `===` or `---` straight under them, spec §4.3) and the laziness of block
// quotes (a line without `>` after a quoted paragraph line continues that paragraph, spec §5.1),
// without changing what rendered before: `---` after a blank line or a list is a rule, a list
// item's `-` is no underline, a lazy line that starts a block (a list, a fence, a heading, a rule)
// ends the quote, and a setext underline is never lazy. Runs in Node on a small stand-in for the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { FakeElement, loadMarkdown, type Markdown } from "./fake-dom";

let md: Markdown;

beforeAll(async () => {
  md = await loadMarkdown();
});

const render = (text: string) => md.renderMarkdown(new FakeElement("div"), text).innerHTML;

describe("setext headings", () => {
  it.each([
    ["Title\n===", '<h2 class="md-h" dir="auto">Title</h2>'],
    ["Title\n---", '<h3 class="md-h" dir="auto">Title</h3>'],
    ["Title\n=", '<h2 class="md-h" dir="auto">Title</h2>'],
    ["Title\n--", '<h3 class="md-h" dir="auto">Title</h3>'],
    ["  Title with *emphasis*  \n   ======   ", '<h2 class="md-h" dir="auto">Title with <em>emphasis</em></h2>'],
    ["Two lines\nof title\n---", '<h3 class="md-h" dir="auto">Two lines<br>of title</h3>'],
    ["Title\n===\nText under it.", '<h2 class="md-h" dir="auto">Title</h2><p dir="auto">Text under it.</p>'],
    [
      "Intro.\n\nTitle\n---\n\nBody.",
      '<p dir="auto">Intro.</p><h3 class="md-h" dir="auto">Title</h3><p dir="auto">Body.</p>',
    ],
    ["> Quoted title\n> ---", '<blockquote dir="ltr"><h3 class="md-h" dir="auto">Quoted title</h3></blockquote>'],
    ["- item\n  ---", '<ul><li dir="auto"><h3 class="md-h" dir="auto">item</h3></li></ul>'],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});

describe("what is no setext heading (as before)", () => {
  it.each([
    ["Para\n\n---", '<p dir="auto">Para</p><hr>'],
    ["---", "<hr>"],
    ["===", '<p dir="auto">===</p>'],
    ["Para\n***", '<p dir="auto">Para</p><hr>'],
    ["Para\n- - -", '<p dir="auto">Para</p><hr>'],
    ["Para\n= =", '<p dir="auto">Para<br>= =</p>'],
    ["Options:\n- one\n- two", '<p dir="auto">Options:</p><ul><li dir="auto">one</li><li dir="auto">two</li></ul>'],
    // One `-` is how a list item starts while a reply streams in.
    ["Options:\n-", '<p dir="auto">Options:<br>-</p>'],
    ["- one\n- two\n---", '<ul><li dir="auto">one</li><li dir="auto">two</li></ul><hr>'],
    ["# Heading\n---", '<h2 class="md-h" dir="auto">Heading</h2><hr>'],
    // A lazy line of a list item is its paragraph's text.
    ["- foo\n===", '<ul><li dir="auto">foo<br>===</li></ul>'],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});

describe("lazy continuation of block quotes", () => {
  it.each([
    ["> quoted\ncontinued", '<blockquote dir="ltr"><p dir="auto">quoted<br>continued</p></blockquote>'],
    ["> one\ntwo\nthree", '<blockquote dir="ltr"><p dir="auto">one<br>two<br>three</p></blockquote>'],
    ["> one\ntwo\n> three", '<blockquote dir="ltr"><p dir="auto">one<br>two<br>three</p></blockquote>'],
    [
      "> > nested\nlazy",
      '<blockquote dir="ltr"><blockquote dir="ltr"><p dir="auto">nested<br>lazy</p></blockquote></blockquote>',
    ],
    ["> - item\nlazy", '<blockquote dir="ltr"><ul><li dir="auto">item<br>lazy</li></ul></blockquote>'],
    // A setext underline is never lazy: it is the paragraph's text.
    ["> quoted\n===", '<blockquote dir="ltr"><p dir="auto">quoted<br>===</p></blockquote>'],
    ["> quoted\n--", '<blockquote dir="ltr"><p dir="auto">quoted<br>--</p></blockquote>'],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });

  it.each([
    ["> quoted\n\nafter", '<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote><p dir="auto">after</p>'],
    [
      "> quoted\n- item",
      '<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote><ul><li dir="auto">item</li></ul>',
    ],
    [
      "> quoted\n1. item",
      '<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote><ol><li dir="auto">item</li></ol>',
    ],
    ["> quoted\n---", '<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote><hr>'],
    [
      "> quoted\n# Heading",
      '<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote><h2 class="md-h" dir="auto">Heading</h2>',
    ],
    [
      "> # Heading\nafter",
      '<blockquote dir="ltr"><h2 class="md-h" dir="auto">Heading</h2></blockquote><p dir="auto">after</p>',
    ],
    ["> ---\nafter", '<blockquote dir="ltr"><hr></blockquote><p dir="auto">after</p>'],
  ])("%j: the line after the quote starts a block of its own", (text, html) => {
    expect(render(text)).toBe(html);
  });

  it.each([
    // A table is no paragraph: the line after a quoted table is not lazy.
    ["> | abc | def |\n> | --- | --- |\n> | bar | baz |\nbar", '</table></div></blockquote><p dir="auto">bar</p>'],
    ["> | abc | def |\n> | --- | --- |\nbar", '</table></div></blockquote><p dir="auto">bar</p>'],
    // A fence inside a (nested) list item is indented 4+ spaces: its closing line closes it.
    [
      "> - a\n>   - b\n>     ```\n>     code\n>     ```\nafter the quote",
      '</blockquote><p dir="auto">after the quote</p>',
    ],
    ["> 10. Step\n>     ```sh\n>     x\n>     ```\nNext line.", '</blockquote><p dir="auto">Next line.</p>'],
  ])("%j: the line after a quoted table or item's fence is not in the quote", (text, end) => {
    const html = render(text);
    expect(html.startsWith('<blockquote dir="ltr">')).toBe(true);
    expect(html.endsWith(end)).toBe(true);
  });

  it("a fence ends the quote, and a line after a quoted fence is not in it", () => {
    const fenced = render("> quoted\n```\ncode\n```");
    expect(fenced.startsWith('<blockquote dir="ltr"><p dir="auto">quoted</p></blockquote>')).toBe(true);
    expect(fenced).not.toContain("quoted<br>");
    expect(fenced.endsWith("</blockquote>")).toBe(false);
    const quotedFence = render("> ```\n> code\nnot lazy");
    expect(quotedFence.startsWith('<blockquote dir="ltr">')).toBe(true);
    expect(quotedFence.endsWith('</blockquote><p dir="auto">not lazy</p>')).toBe(true);
  });

  it("re-rendered as the reply streams, the quote takes its lazy line in place", () => {
    const el = new FakeElement("div");
    md.renderMarkdown(el, "> quoted");
    md.renderMarkdown(el, "> quoted\ncontinued");
    expect(el.innerHTML).toBe('<blockquote dir="ltr"><p dir="auto">quoted<br>continued</p></blockquote>');
    md.renderMarkdown(el, "Title");
    md.renderMarkdown(el, "Title\n===");
    expect(el.innerHTML).toBe('<h2 class="md-h" dir="auto">Title</h2>');
  });
});
