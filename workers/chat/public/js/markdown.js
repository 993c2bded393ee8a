// Markdown into DOM nodes, never through innerHTML: every piece of model text ends up in a text
// node, and links are made only to http(s) and mailto addresses. Covers what chat replies use:
// headings, paragraphs, fenced code (language label, monospace, Copy), lists (nested, ordered,
// tasks), block quotes, tables, rules; inline code, bold, italic, strike-through, links.
// `renderMarkdown` re-renders into the same element block by block: a block whose source did not
// change keeps its nodes, so a streaming reply only rebuilds its last block (no flicker).
import { h } from "./dom.js";

/** @typedef {{ src: string, build: () => Node }} Block */

/** The source each rendered block came from (reused while it does not change). */
const sources = new WeakMap();

/** @param {HTMLElement} el @param {string} text */
export function renderMarkdown(el, text) {
  const blocks = parseBlocks(text.replace(/\r\n?/g, "\n"));
  const kids = el.children;
  blocks.forEach((b, i) => {
    const old = kids[i];
    if (old && sources.get(old) === b.src) return;
    const node = /** @type {HTMLElement} */ (b.build());
    sources.set(node, b.src);
    old ? old.replaceWith(node) : el.append(node);
  });
  while (kids.length > blocks.length) /** @type {Element} */ (el.lastElementChild).remove();
  return el;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$/;
// A closing run of # is stripped only after a space: "## Learning C#" keeps its "C#".
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

/** @param {string} text @returns {Block[]} */
function parseBlocks(text) {
  const lines = text.split("\n");
  /** @type {Block[]} */
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    const start = i;
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const lang = m[2];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp(`^ {0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[i]))
        body.push(lines[i++]);
      const closed = i < lines.length;
      if (closed) i++;
      const code = body.join("\n");
      out.push({
        src: lines.slice(start, i).join("\n") + (closed ? "" : "\u0000"),
        build: () => codeBlock(code, lang),
      });
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const level = m[1].length;
      const content = m[2];
      i++;
      out.push({ src: line, build: () => h(`h${Math.min(6, level + 1)}`, { class: "md-h" }, inline(content)) });
      continue;
    }
    if (RULE.test(line)) {
      i++;
      out.push({ src: line, build: () => h("hr") });
      continue;
    }
    if (QUOTE.test(line)) {
      while (i < lines.length && lines[i].trim() && QUOTE.test(lines[i])) i++;
      const inner = lines
        .slice(start, i)
        .map((l) => l.replace(QUOTE, ""))
        .join("\n");
      out.push({
        src: lines.slice(start, i).join("\n"),
        build: () =>
          h(
            "blockquote",
            null,
            parseBlocks(inner).map((b) => b.build()),
          ),
      });
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i += 2;
      while (i < lines.length && lines[i].trim() && lines[i].includes("|")) i++;
      const rows = lines.slice(start, i);
      out.push({ src: rows.join("\n"), build: () => table(rows) });
      continue;
    }
    if (ITEM.test(line)) {
      const indent = /** @type {RegExpExecArray} */ (ITEM.exec(line))[1].length;
      i++;
      // Items, their continuation lines and nested lists, up to a line back at or before the list's indent that is no item.
      while (i < lines.length) {
        const l = lines[i];
        if (!l.trim()) {
          const next = lines[i + 1];
          if (next?.trim() && (indentOf(next) > indent || (ITEM.test(next) && indentOf(next) >= indent))) {
            i++;
            continue;
          }
          break;
        }
        if (indentOf(l) <= indent && !ITEM.test(l) && startsBlock(l)) break;
        i++;
      }
      const itemLines = lines.slice(start, i);
      out.push({ src: itemLines.join("\n"), build: () => list(itemLines, indent) });
      continue;
    }
    i++;
    while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) i++;
    const para = lines.slice(start, i).join("\n");
    out.push({ src: para, build: () => h("p", null, inline(para.trim())) });
  }
  return out;
}

/** @param {string} l */
const indentOf = (l) => /** @type {RegExpExecArray} */ (/^ */.exec(l.replace(/\t/g, "    ")))[0].length;

/** @param {string} l */
function startsBlock(l) {
  return FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || ITEM.test(l) || RULE.test(l);
}

/** @param {string[]} lines @param {number} indent */
function list(lines, indent) {
  const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[0]));
  const ordered = /\d/.test(first[2]);
  /** @type {string[][]} */
  const items = [];
  for (const l of lines) {
    const m = ITEM.exec(l);
    if (m && m[1].length <= indent + 1) items.push([m[3]]);
    else items[items.length - 1]?.push(l.slice(Math.min(indentOf(l), indent + first[2].length + 1)));
  }
  const attrs =
    ordered && Number.parseInt(first[2], 10) !== 1 ? { start: String(Number.parseInt(first[2], 10)) } : null;
  return h(
    ordered ? "ol" : "ul",
    attrs,
    items.map((item) => {
      const task = /^\[([ xX])\]\s+/.exec(item[0]);
      if (task) item[0] = item[0].slice(task[0].length);
      const body = item.join("\n");
      // A tight item is its inline text; one with nested blocks renders them.
      const nested = item.length > 1 ? parseBlocks(body).map((b) => b.build()) : [inline(body)];
      const unwrapped =
        nested.length && nested[0] instanceof HTMLParagraphElement && item.length > 1
          ? [...nested[0].childNodes, ...nested.slice(1)]
          : nested;
      return h(
        "li",
        task ? { class: "task" } : null,
        task
          ? h("input", {
              type: "checkbox",
              disabled: true,
              checked: task[1] !== " ",
              "aria-label": task[1] !== " " ? "done" : "not done",
            })
          : null,
        unwrapped,
      );
    }),
  );
}

/** @param {string} row */
const cells = (row) =>
  row
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, "|"));

/** @param {string[]} rows */
function table(rows) {
  const align = cells(rows[1]).map((c) => (/^:-+:$/.test(c) ? "center" : /-:$/.test(c) ? "right" : ""));
  /** @param {string} tag @param {string} row */
  const tr = (tag, row) =>
    h(
      "tr",
      null,
      cells(row).map((c, i) => h(tag, align[i] ? { class: `al-${align[i]}` } : null, inline(c))),
    );
  return h(
    "div",
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "table" },
    h(
      "table",
      null,
      h("thead", null, tr("th", rows[0])),
      h(
        "tbody",
        null,
        rows.slice(2).map((r) => tr("td", r)),
      ),
    ),
  );
}

/** A code block: its language, monospace text and a Copy button. @param {string} code @param {string} lang */
export function codeBlock(code, lang) {
  const copy = h(
    "button",
    { type: "button", class: "copy-code ghost", "aria-label": `Copy ${lang || "code"}` },
    "Copy",
  );
  copy.addEventListener("click", () => copyText(code, copy));
  return h(
    "div",
    { class: "code-block" },
    h("div", { class: "code-head" }, h("span", { class: "code-lang" }, lang || "text"), copy),
    h("pre", { tabindex: "0" }, h("code", lang ? { "data-lang": lang } : null, code)),
  );
}

/** Copies to the clipboard and says so on the button for a moment. @param {string} text @param {HTMLElement} button */
export async function copyText(text, button) {
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  setTimeout(() => (button.textContent = label), 1500);
}

// Code spans bind first (CommonMark): they are cut out before the rest is read, so a `*` before
// one never opens emphasis across it, and put back where their placeholder lands.
const CODE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
const SLOT = /\uE000(\d+)\uE001/g;
// A link's address may hold balanced parentheses: /wiki/Foo_(bar). The source only: each
// reading (a span's inner text too) runs its own RegExp, so nested readings keep their places.
const INLINE = [
  String.raw`\*\*\*(?<strongEm>(?=\S)[\s\S]*?\S)\*\*\*`,
  String.raw`\*\*(?<strong>(?=\S)[\s\S]*?\S)\*\*`,
  String.raw`__(?<strongU>(?=\S)[\s\S]*?\S)__(?!\w)`,
  String.raw`~~(?<del>(?=\S)[\s\S]*?\S)~~`,
  String.raw`\*(?<em>(?=[^\s*])[\s\S]*?[^\s*])\*`,
  String.raw`(?<![\w_])_(?<emU>(?=[^\s_])[\s\S]*?[^\s_])_(?![\w_])`,
  String.raw`\[(?<label>[^\]\n]+)\]\(\s*<?(?<href>(?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+"[^"\n]*")?\s*\)`,
  String.raw`<(?<auto>(?:https?:\/\/|mailto:)[^>\s]+)>`,
  String.raw`(?<bare>https?:\/\/[^\s<]*[^\s<.,;:!?)\]'"*_~])`,
  String.raw`\\(?<escaped>[\\\x60*_{}[\]()#+\-.!|~>])`,
  String.raw`(?<br>( {2,}|\\)\n|\n)`,
].join("|");

/** Text with code-span placeholders as nodes. @param {string} text @param {string[]} codes @returns {(Node | string)[]} */
function withCode(text, codes) {
  /** @type {(Node | string)[]} */
  const out = [];
  let last = 0;
  for (const m of text.matchAll(SLOT)) {
    const code = codes[Number(m[1])];
    // Private-use characters the text itself held are not a slot: they stay text.
    if (code === undefined) continue;
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(h("code", null, code));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Inline markdown as nodes. @param {string} text @returns {(Node | string)[]} */
export function inline(text) {
  /** @type {string[]} */
  const codes = [];
  const slotted = text.replace(
    CODE,
    (_m, _ticks, code) => `\uE000${codes.push(code.replace(/^ (.*) $/, "$1")) - 1}\uE001`,
  );
  return spans(slotted, codes);
}

/** The inline spans of text whose code spans are placeholders. @param {string} text @param {string[]} codes @returns {(Node | string)[]} */
function spans(text, codes) {
  /** @type {(Node | string)[]} */
  const out = [];
  let last = 0;
  const re = new RegExp(INLINE, "g");
  for (let m; (m = re.exec(text)); ) {
    if (m.index > last) out.push(...withCode(text.slice(last, m.index), codes));
    last = m.index + m[0].length;
    const g = /** @type {Record<string, string | undefined>} */ (m.groups);
    const inner = (/** @type {string} */ s) => spans(s, codes);
    if (g.strongEm !== undefined) out.push(h("strong", null, h("em", null, inner(g.strongEm))));
    else if (g.strong !== undefined) out.push(h("strong", null, inner(g.strong)));
    else if (g.strongU !== undefined) out.push(h("strong", null, inner(g.strongU)));
    else if (g.del !== undefined) out.push(h("del", null, inner(g.del)));
    else if (g.em !== undefined) out.push(h("em", null, inner(g.em)));
    else if (g.emU !== undefined) out.push(h("em", null, inner(g.emU)));
    else if (g.label !== undefined) out.push(safeLink(/** @type {string} */ (g.href), inner(g.label)));
    else if (g.auto !== undefined) out.push(safeLink(g.auto, [g.auto.replace(/^mailto:/, "")]));
    else if (g.bare !== undefined) {
      // A bare URL keeps a closing parenthesis that balances one it holds: …/Foo_(bar).
      let url = g.bare;
      while (text[last] === ")" && url.split("(").length > url.split(")").length) {
        url += ")";
        last++;
        re.lastIndex = last;
      }
      out.push(safeLink(url, [url]));
    } else if (g.escaped !== undefined) out.push(g.escaped);
    else out.push(h("br"));
  }
  if (last < text.length) out.push(...withCode(text.slice(last), codes));
  return out;
}

/** A link only to http(s) and mailto addresses, opened apart from the app; anything else stays text. @param {string} url @param {(Node | string)[]} label */
export function safeLink(url, label) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || !["http:", "https:", "mailto:"].includes(parsed.protocol)) return h("span", null, label);
  return h("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer nofollow" }, label);
}
