// The web UI's markdown (workers/chat/public/js/markdown.js) on quotes and lists nested thousands of
// levels deep. The renderer read one level per call and took a line's `>` markers off one at a
// time: a 6 KB line of "> " ran out of stack (and the chat view of a conversation holding such a
// reply showed only the error), and 100 KB of deep quotes took seconds. Quotes and lists now nest
// as inline spans do, 17 levels at most (16 past the top); deeper, the text stays text. Should the
// renderer still throw, a reply shows its text as plain text. Runs in Node on a small stand-in for
// the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, FakeElement, loadMarkdown, loadUiModule, type Markdown } from "./fake-dom";

interface Turns {
  assistantBlock: (replies: unknown[]) => FakeElement;
}

let md: Markdown;
let turns: Turns;

beforeAll(async () => {
  md = await loadMarkdown();
  turns = (await loadUiModule("turns.js")) as Turns;
});

const render = (text: string) => md.renderMarkdown(new FakeElement("div"), text).innerHTML;
const count = (html: string, tag: string) => html.split(`<${tag}`).length - 1;
/**
 * The rendering, its work counted as the regular-expression matches it runs: no more than the text
 * has characters (each line read a bounded number of times at each of at most 17 levels, never
 * once per marker or per level of thousands). Past that it stops, so quadratic work fails at once.
 */
function renderCounted(text: string): string {
  const exec = RegExp.prototype.exec;
  let calls = 0;
  RegExp.prototype.exec = function (this: RegExp, s: string) {
    if (++calls > text.length) throw new Error(`more than ${text.length} matches`);
    return exec.call(this, s);
  };
  const el = new FakeElement("div");
  try {
    md.renderMarkdown(el, text);
  } finally {
    RegExp.prototype.exec = exec;
  }
  return el.innerHTML;
}

/** How deep quotes and lists nest in the rendering. */
function nesting(html: string): number {
  let depth = 0;
  let most = 0;
  for (const m of html.matchAll(/<(\/?)(?:blockquote|ul|ol)\b/g)) {
    depth += m[1] ? -1 : 1;
    most = Math.max(most, depth);
  }
  return most;
}
/** What the innermost paragraph of the rendering holds. */
const innermost = (html: string) =>
  /<p dir="auto">((?:(?!<p ).)*?)<\/p>(?:<\/(?:blockquote|li|ul)>)*$/s.exec(html)?.[1];

describe("deeply nested quotes and lists", () => {
  it.each([3000, 10_000])("a %i-level quote renders 17 levels and the rest as text", (levels) => {
    const html = renderCounted(`${"> ".repeat(levels)}x`);
    expect(count(html, "blockquote")).toBe(17);
    expect(innermost(html)).toBe(escapeHtml(`${"> ".repeat(levels - 17)}x`));
  });

  it("markup nested past 16 levels stays text; at 16 it is markup", () => {
    expect(render(`${"> ".repeat(16)}**x**`)).toBe(
      `${'<blockquote dir="ltr">'.repeat(16)}<p dir="auto"><strong>x</strong></p>${"</blockquote>".repeat(16)}`,
    );
    expect(render(`${"> ".repeat(40)}**x** and\n> a second line`)).toBe(
      `${'<blockquote dir="ltr">'.repeat(17)}<p dir="auto">${escapeHtml("> ".repeat(23))}**x** and<br>a second line</p>${"</blockquote>".repeat(17)}`,
    );
  });

  it("a list nested 40 levels renders 17 and the rest as text", () => {
    const text = Array.from({ length: 40 }, (_, k) => `${"  ".repeat(k)}- item ${k}`).join("\n");
    const html = render(text);
    expect(count(html, "ul")).toBe(17);
    expect(html).toContain("item 16<br>- item 17<br>");
    expect(html).not.toContain('<li dir="auto">item 17');
  });

  it.each([
    ["list markers on one quoted line", `> ${"- ".repeat(10_000)}x`],
    ["list items each holding the next", `${"- ".repeat(3000)}x\n  more`],
    ["quotes and lists in turn", `${"> - ".repeat(3000)}x\n> more`],
    ["50 lines of 1,000-level quotes (100 KB)", `${"> ".repeat(1000)}x\n`.repeat(50)],
  ])("%s render 17 levels deep at most, in work linear in their length", (_name, text) => {
    const html = renderCounted(text);
    expect(nesting(html)).toBeLessThanOrEqual(17);
    expect(html).toMatch(/x(<br>|<\/)/);
  });
});

describe("the reply view", () => {
  it("renders a turn whose reply is a 3,000-level quote", () => {
    const el = turns.assistantBlock([
      { id: "m1", seq: 2, role: "assistant", content: [{ type: "text", text: `${"> ".repeat(3000)}x` }] },
      { id: "m2", seq: 3, role: "assistant", content: [{ type: "text", text: "a normal answer" }] },
    ]);
    expect(count(el.innerHTML, "blockquote")).toBe(17);
    expect(el.innerHTML).toContain('<div class="md"><p dir="auto">a normal answer</p></div>');
  });

  it("shows a text the renderer throws on as plain text, and the rest of the turn", () => {
    // No string: what a broken record could hold, and the renderer throws on.
    const el = turns.assistantBlock([
      { id: "m1", seq: 2, role: "assistant", content: [{ type: "text", text: 42 }] },
      { id: "m2", seq: 3, role: "assistant", content: [{ type: "text", text: "a normal answer" }] },
    ]);
    expect(el.innerHTML).toContain('<div class="md"><div class="text" dir="auto">42</div></div>');
    expect(el.innerHTML).toContain('<div class="md"><p dir="auto">a normal answer</p></div>');
  });
});
