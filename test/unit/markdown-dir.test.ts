// The web UI's markdown gives each block of text dir="auto", so a Hebrew or Arabic block reads right
// to left; a quote and a table take their first letter's direction; code stays left to right.
import { beforeAll, describe, expect, it } from "vitest";
import { FakeElement, loadMarkdown, type Markdown } from "./fake-dom";

let md: Markdown;

beforeAll(async () => {
  md = await loadMarkdown();
});

const render = (text: string) => md.renderMarkdown(new FakeElement("div"), text).innerHTML;

describe("markdown block direction", () => {
  it("paragraphs, headings, list items and cells have dir=auto; code blocks none", () => {
    const html = render(
      "# כותרת\n\nשלום עולם.\n\n- פריט\n- item\n\n| א | b |\n|---|--:|\n| 1 | 2 |\n\n```\nx = 1\n```",
    );
    expect(html).toContain('<h2 class="md-h" dir="auto">כותרת</h2>');
    expect(html).toContain('<p dir="auto">שלום עולם.</p>');
    expect(html).toContain('<ul><li dir="auto">פריט</li><li dir="auto">item</li></ul>');
    expect(html).toContain(
      '<div class="table-wrap" dir="rtl" tabindex="0" role="region" aria-label="table"><table><thead><tr><th dir="auto">א</th><th class="al-right" dir="auto">b</th>',
    );
    expect(html).toContain('<pre tabindex="0"><code>x = 1</code></pre>');
  });

  it("a quote takes its first letter's direction, its paragraphs their own", () => {
    expect(render("> مرحبا\n>\n> hello")).toBe(
      '<blockquote dir="rtl"><p dir="auto">مرحبا</p><p dir="auto">hello</p></blockquote>',
    );
    expect(render("> **hello** שלום")).toBe(
      '<blockquote dir="ltr"><p dir="auto"><strong>hello</strong> שלום</p></blockquote>',
    );
  });

  it("a setext heading and a task item have dir=auto", () => {
    expect(render("שלום\n===")).toBe('<h2 class="md-h" dir="auto">שלום</h2>');
    expect(render("- [x] גמור")).toBe(
      '<ul><li class="task" dir="auto"><input type="checkbox" disabled="" checked="" aria-label="done">גמור</li></ul>',
    );
  });
});
