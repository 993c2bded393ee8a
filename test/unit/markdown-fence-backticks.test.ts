// The web UI's markdown (workers/chat/public/js/markdown.js): a backtick fence's info string holds
// no backtick (CommonMark §4.5), so "```npm install```" on a line of its own is a paragraph with the
// code span `npm install`, not a fence that drops the line's text and turns the rest of the reply
// into code. A tilde fence's info string may hold backticks, and a fence opened while a reply
// streams in ("```py") opens as before. Runs in Node on a small stand-in for the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { FakeElement, loadMarkdown, type Markdown } from "./fake-dom";

let md: Markdown;

beforeAll(async () => {
  md = await loadMarkdown();
});

const render = (text: string) => md.renderMarkdown(new FakeElement("div"), text).innerHTML;
const code = (lang: string, text: string) =>
  `<div class="code-block"><div class="code-head"><span class="code-lang">${lang}</span><button type="button" class="copy-code ghost" aria-label="Copy ${lang}">Copy</button></div><pre tabindex="0"><code data-lang="${lang}">${text}</code></pre></div>`;

describe("a backtick line whose info string holds a backtick is no fence", () => {
  it.each([
    [
      "```npm install```\n\nThen **open** the app.",
      '<p dir="auto"><code>npm install</code></p><p dir="auto">Then <strong>open</strong> the app.</p>',
    ],
    // CommonMark's example: "``` aa ```\nfoo" is <p><code>aa</code>\nfoo</p>.
    ["``` aa ```\nfoo", '<p dir="auto"><code>aa</code><br>foo</p>'],
    ["Run this:\n```npm install```\nthen go", '<p dir="auto">Run this:<br><code>npm install</code><br>then go</p>'],
    [
      "> ```npm install```\n> then go",
      '<blockquote dir="ltr"><p dir="auto"><code>npm install</code><br>then go</p></blockquote>',
    ],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});

describe("fences (as before)", () => {
  it.each([
    ["```js\nlet a = 1;\n```\nafter", `${code("js", "let a = 1;")}<p dir="auto">after</p>`],
    // CommonMark's example: a tilde fence's info string may hold backticks.
    ["~~~ aa ``` ~~~\nfoo\n~~~", code("aa", "foo")],
    // A reply streaming in: the fence is open before its code arrives.
    ["```py", code("py", "")],
    ["```py\nprint(1)", code("py", "print(1)")],
  ])("%j", (text, html) => {
    expect(render(text)).toBe(html);
  });
});
