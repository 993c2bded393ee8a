// The web UI's markdown (workers/chat/public/js/markdown.js): a link's label is the link's text,
// so an address written in it (bare or an <autolink>) is not made a second link
// inside the first (an <a> in an <a> is invalid HTML, and the browser splits it apart). Runs in
// Node on a small stand-in for the DOM.
import { beforeAll, describe, expect, it } from "vitest";

class FakeNode {}

class FakeText extends FakeNode {
  constructor(public data: string) {
    super();
  }
}

class FakeElement extends FakeNode {
  readonly tag: string;
  readonly childNodes: FakeNode[] = [];
  readonly attributes = new Map<string, string>();
  constructor(tag: string) {
    super();
    this.tag = tag;
  }
  set className(v: string) {
    this.attributes.set("class", v);
  }
  setAttribute(k: string, v: string): void {
    this.attributes.set(k, v);
  }
  addEventListener(): void {}
  appendChild(c: FakeNode): FakeNode {
    this.childNodes.push(c);
    return c;
  }
}

const serialize = (n: FakeNode): string => {
  if (n instanceof FakeText) return n.data;
  const el = n as FakeElement;
  const href = el.attributes.get("href");
  return `<${el.tag}${href ? ` href="${href}"` : ""}>${el.childNodes.map(serialize).join("")}</${el.tag}>`;
};

let inline: (text: string) => (FakeNode | string)[];

beforeAll(async () => {
  Object.assign(globalThis, {
    Node: FakeNode,
    document: {
      createElement: (tag: string) => new FakeElement(tag),
      createTextNode: (text: string) => new FakeText(text),
    },
  });
  // A URL, not a literal path: the UI's plain-JS modules have no type declarations here.
  const md = (await import(new URL("../../workers/chat/public/js/markdown.js", import.meta.url).href)) as {
    inline: typeof inline;
  };
  inline = md.inline;
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
