// The web UI's markdown (workers/chat/public/js/markdown.js): a link's label is the link's text,
// so an address written in it (bare or an <autolink>) is not made a second link
// inside the first (an <a> in an <a> is invalid HTML, and the browser splits it apart). Runs in
// Node on a small stand-in for the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { type FakeElement, type FakeNode, FakeText, loadMarkdown, type Markdown } from "./fake-dom";

/** Text as written and only a link's href: what these cases compare. */
const serialize = (n: FakeNode): string => {
  if (n instanceof FakeText) return n.data;
  const el = n as FakeElement;
  const tag = el.tagName.toLowerCase();
  const href = el.attributes.get("href");
  return `<${tag}${href ? ` href="${href}"` : ""}>${el.childNodes.map(serialize).join("")}</${tag}>`;
};

let inline: Markdown["inline"];

beforeAll(async () => {
  ({ inline } = await loadMarkdown());
});

const render = (text: string) =>
  inline(text)
    .map((n) => (typeof n === "string" ? n : serialize(n)))
    .join("");

describe("markdown link labels", () => {
  it.each([
    ["a bare URL", "[see https://a.com](https://b.com)", '<a href="https://b.com/">see https://a.com</a>'],
    ["an autolink", "[see <https://a.com>](https://b.com)", '<a href="https://b.com/">see <https://a.com></a>'],
    [
      "an emphasized URL",
      "[see **https://a.com**](https://b.com)",
      '<a href="https://b.com/">see <strong>https://a.com</strong></a>',
    ],
  ])("a label holding %s makes one link, not one inside another", (_name, text, expected) => {
    const html = render(text);
    expect(html.match(/<a /g)?.length).toBe(1);
    expect(html).toBe(expected);
  });

  it("emphasis in a label and bare URLs beside a link still render", () => {
    expect(render("[**bold** label](https://b.com) and https://c.com")).toBe(
      '<a href="https://b.com/"><strong>bold</strong> label</a> and <a href="https://c.com/">https://c.com</a>',
    );
  });
});
