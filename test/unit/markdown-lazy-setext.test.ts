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
    ["Title\n===", '<h2 class="md-h">Title</h2>'],
    ["Title\n---", '<h3 class="md-h">Title</h3>'],
    ["Title\n=", '<h2 class="md-h">Title</h2>'],
    ["Title\n--", '<h3 class="md-h">Title</h3>'],
    ["  Title with *emphasis*  \n   ======   ", '<h2 class="md-h">Title with <em>emphasis</em></h2>'],
    ["Two lines\nof title\n---", '<h3 class="md-h">Two lines<br>of title</h3>'],
    ["Title\n===\nText under it.", '<h2 class="md-h">Title</h2><p>Text under it.</p>'],
    ["Intro.\n\nTitle\n---\n\nBody.", '<p>Intro.</p><h3 class="md-h">Title</h3><p>Body.</p>'],
    ["> Quoted title\n> ---", '<blockquote><h3 class="md-h">Quoted title</h3></blockquote>'],
    ["- item\n  ---", '<ul><li><h3 class="md-h">item</h3></li></ul>'],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});

describe("what is no setext heading (as before)", () => {
  it.each([
    ["Para\n\n---", "<p>Para</p><hr>"],
    ["---", "<hr>"],
    ["===", "<p>===</p>"],
    ["Para\n***", "<p>Para</p><hr>"],
    ["Para\n- - -", "<p>Para</p><hr>"],
    ["Para\n= =", "<p>Para<br>= =</p>"],
    ["Options:\n- one\n- two", "<p>Options:</p><ul><li>one</li><li>two</li></ul>"],
    // One `-` is how a list item starts while a reply streams in.
    ["Options:\n-", "<p>Options:<br>-</p>"],
    ["- one\n- two\n---", "<ul><li>one</li><li>two</li></ul><hr>"],
    ["# Heading\n---", '<h2 class="md-h">Heading</h2><hr>'],
    // A lazy line of a list item is its paragraph's text.
    ["- foo\n===", "<ul><li>foo<br>===</li></ul>"],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});

describe("lazy continuation of block quotes", () => {
  it.each([
    ["> quoted\ncontinued", "<blockquote><p>quoted<br>continued</p></blockquote>"],
    ["> one\ntwo\nthree", "<blockquote><p>one<br>two<br>three</p></blockquote>"],
    ["> one\ntwo\n> three", "<blockquote><p>one<br>two<br>three</p></blockquote>"],
    ["> > nested\nlazy", "<blockquote><blockquote><p>nested<br>lazy</p></blockquote></blockquote>"],
    ["> - item\nlazy", "<blockquote><ul><li>item<br>lazy</li></ul></blockquote>"],
    // A setext underline is never lazy: it is the paragraph's text.
    ["> quoted\n===", "<blockquote><p>quoted<br>===</p></blockquote>"],
    ["> quoted\n--", "<blockquote><p>quoted<br>--</p></blockquote>"],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });

  it.each([
    ["> quoted\n\nafter", "<blockquote><p>quoted</p></blockquote><p>after</p>"],
    ["> quoted\n- item", "<blockquote><p>quoted</p></blockquote><ul><li>item</li></ul>"],
    ["> quoted\n1. item", "<blockquote><p>quoted</p></blockquote><ol><li>item</li></ol>"],
    ["> quoted\n---", "<blockquote><p>quoted</p></blockquote><hr>"],
    ["> quoted\n# Heading", '<blockquote><p>quoted</p></blockquote><h2 class="md-h">Heading</h2>'],
    ["> # Heading\nafter", '<blockquote><h2 class="md-h">Heading</h2></blockquote><p>after</p>'],
    ["> ---\nafter", "<blockquote><hr></blockquote><p>after</p>"],
  ])("%j: the line after the quote starts a block of its own", (text, html) => {
    expect(render(text)).toBe(html);
  });

  it.each([
    // A table is no paragraph: the line after a quoted table is not lazy.
    ["> | abc | def |\n> | --- | --- |\n> | bar | baz |\nbar", "</table></div></blockquote><p>bar</p>"],
    ["> | abc | def |\n> | --- | --- |\nbar", "</table></div></blockquote><p>bar</p>"],
    // A fence inside a (nested) list item is indented 4+ spaces: its closing line closes it.
    ["> - a\n>   - b\n>     ```\n>     code\n>     ```\nafter the quote", "</blockquote><p>after the quote</p>"],
    ["> 10. Step\n>     ```sh\n>     x\n>     ```\nNext line.", "</blockquote><p>Next line.</p>"],
  ])("%j: the line after a quoted table or item's fence is not in the quote", (text, end) => {
    const html = render(text);
    expect(html.startsWith("<blockquote>")).toBe(true);
    expect(html.endsWith(end)).toBe(true);
  });

  it("a fence ends the quote, and a line after a quoted fence is not in it", () => {
    const fenced = render("> quoted\n```\ncode\n```");
    expect(fenced.startsWith("<blockquote><p>quoted</p></blockquote>")).toBe(true);
    expect(fenced).not.toContain("quoted<br>");
    expect(fenced.endsWith("</blockquote>")).toBe(false);
    const quotedFence = render("> ```\n> code\nnot lazy");
    expect(quotedFence.startsWith("<blockquote>")).toBe(true);
    expect(quotedFence.endsWith("</blockquote><p>not lazy</p>")).toBe(true);
  });

  it("re-rendered as the reply streams, the quote takes its lazy line in place", () => {
    const el = new FakeElement("div");
    md.renderMarkdown(el, "> quoted");
    md.renderMarkdown(el, "> quoted\ncontinued");
    expect(el.innerHTML).toBe("<blockquote><p>quoted<br>continued</p></blockquote>");
    md.renderMarkdown(el, "Title");
    md.renderMarkdown(el, "Title\n===");
    expect(el.innerHTML).toBe('<h2 class="md-h">Title</h2>');
  });
});
