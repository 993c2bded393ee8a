// A small stand-in for the DOM, so the web UI's markdown (workers/chat/public/js/markdown.js) renders
// in Node: elements and text nodes, serialized like innerHTML. `loadMarkdown` puts it on the global
// object and imports the module. The unit tests that use it share a module graph (isolation.ts):
// the globals it sets are only ever these, and the module reads them when it renders.
export class FakeNode {
  parentNode: FakeElement | null = null;
}

export class FakeText extends FakeNode {
  constructor(public data: string) {
    super();
  }
  get textContent(): string {
    return this.data;
  }
}

export class FakeElement extends FakeNode {
  readonly tagName: string;
  childNodes: FakeNode[] = [];
  readonly attributes = new Map<string, string>();
  readonly dataset: Record<string, string> = {};
  constructor(tag: string) {
    super();
    this.tagName = tag.toUpperCase();
  }
  set className(v: string) {
    this.attributes.set("class", v);
  }
  setAttribute(k: string, v: string): void {
    this.attributes.set(k, String(v));
  }
  addEventListener(): void {}
  appendChild(c: FakeNode): FakeNode {
    c.parentNode?.childNodes.splice(c.parentNode.childNodes.indexOf(c), 1);
    c.parentNode = this;
    this.childNodes.push(c);
    return c;
  }
  append(...cs: (FakeNode | string)[]): void {
    for (const c of cs) this.appendChild(typeof c === "string" ? new FakeText(c) : c);
  }
  replaceChildren(...cs: (FakeNode | string)[]): void {
    for (const c of this.childNodes) c.parentNode = null;
    this.childNodes = [];
    this.append(...cs);
  }
  get children(): FakeElement[] {
    return this.childNodes.filter((c): c is FakeElement => c instanceof FakeElement);
  }
  get lastElementChild(): FakeElement | null {
    return this.children.at(-1) ?? null;
  }
  remove(): void {
    this.parentNode?.childNodes.splice(this.parentNode.childNodes.indexOf(this), 1);
    this.parentNode = null;
  }
  replaceWith(n: FakeNode): void {
    const p = this.parentNode;
    if (!p) return;
    p.childNodes[p.childNodes.indexOf(this)] = n;
    n.parentNode = p;
    this.parentNode = null;
  }
  get textContent(): string {
    return this.childNodes.map((c) => (c as FakeText | FakeElement).textContent).join("");
  }
  get innerHTML(): string {
    return this.childNodes.map(serialize).join("");
  }
}

class FakeParagraph extends FakeElement {}

export const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function serialize(n: FakeNode): string {
  if (n instanceof FakeText) return escapeHtml(n.data);
  const el = n as FakeElement;
  const attrs = [...el.attributes].map(([k, v]) => ` ${k}="${escapeHtml(v).replace(/"/g, "&quot;")}"`).join("");
  const tag = el.tagName.toLowerCase();
  if (tag === "br" || tag === "hr" || tag === "input") return `<${tag}${attrs}>`;
  return `<${tag}${attrs}>${el.childNodes.map(serialize).join("")}</${tag}>`;
}

/** What the tests call of markdown.js. */
export interface Markdown {
  renderMarkdown: (el: FakeElement, text: string) => FakeElement;
  inline: (text: string) => (FakeNode | string)[];
}

/** Puts the fake DOM on the global object, then imports markdown.js. */
export async function loadMarkdown(): Promise<Markdown> {
  Object.assign(globalThis, {
    Node: FakeNode,
    HTMLParagraphElement: FakeParagraph,
    document: {
      createElement: (tag: string) => (tag === "p" ? new FakeParagraph(tag) : new FakeElement(tag)),
      createTextNode: (text: string) => new FakeText(text),
    },
  });
  // A URL, not a literal path: the UI's plain-JS modules have no type declarations here.
  return (await import(new URL("../../workers/chat/public/js/markdown.js", import.meta.url).href)) as Markdown;
}

/** Puts the fake DOM on the global object, then imports another of the UI's modules (`render.js`, `turns.js`). */
export async function loadUiModule(name: string): Promise<unknown> {
  await loadMarkdown();
  return import(new URL(`../../workers/chat/public/js/${name}`, import.meta.url).href);
}
