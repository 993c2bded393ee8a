// Markdown into DOM nodes, never through innerHTML: every piece of model text ends up in a text
// node, and links are made only to http(s) and mailto addresses. Covers what chat replies use:
// headings, paragraphs, fenced code (language label, monospace, Copy), lists (nested, ordered,
// tasks), block quotes, tables, rules; inline code, bold, italic, strike-through, links.
// `renderMarkdown` re-renders into the same element block by block: a block whose source did not
// change keeps its nodes, so a streaming reply only rebuilds its last block (no flicker).
// Each block of text (paragraph, heading, list item, table cell) has dir="auto": it reads right to
// left when its first letter is Hebrew or Arabic, and as before otherwise. A quote and a table, whose
// blocks and cells each carry their own dir (which dir="auto" skips), take the direction of their
// first letter (a table's on its scroller), so a quote's bar and a table's first column are on that
// side. Code stays left to right.
import { h } from "./dom.js";

const AUTO = "auto";
const RTL_SCRIPT = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;

/** The direction of a text's first letter: "rtl" for a right-to-left script, "ltr" otherwise. @param {string} text */
function direction(text) {
  const letter = /\p{L}/u.exec(text);
  return letter && RTL_SCRIPT.test(letter[0]) ? "rtl" : "ltr";
}

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

/**
 * renderMarkdown, or the text as plain text should the renderer throw: a reply it cannot read
 * still shows, and the rest of the conversation (or the stream) renders around it.
 * @param {HTMLElement} el @param {string} text
 */
export function renderMarkdownOrText(el, text) {
  try {
    return renderMarkdown(el, text);
  } catch {
    el.replaceChildren(h("div", { class: "text", dir: AUTO }, String(text)));
    return el;
  }
}

// Quotes, lists and inline spans nest at most this deep; deeper, the text stays text. Each level
// reads its text again, so unbounded nesting (`> > > …` thousands deep) would be quadratic work
// and run out of stack.
const MAX_NESTING = 16;

// A backtick fence's info string holds no backtick (CommonMark §4.5): "```npm install```" is a
// paragraph with a code span, not a fence.
const FENCE = /^ {0,3}(`{3,}(?=[^`]*$)|~{3,})\s*([\w+#.-]*)[^\n]*$/;
// A closing run of # is stripped only after a space: "## Learning C#" keeps its "C#".
const HEADING_START = /^ {0,3}(#{1,6})\s+/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?/;
// All of a line's quote markers at once (one at a time is quadratic in a line of thousands).
const QUOTES = /^(?: {0,3}> ?)+/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
// A setext heading's underline, straight under its paragraph: `=` for a level-1 heading, `-` for
// level 2. One `-` alone is not one (it is how a list item starts while a reply streams in), and
// `- - -` or `***` is a rule.
const SETEXT = /^ {0,3}(=+|-{2,})[ \t]*$/;

/**
 * @param {string} text
 * @param {Set<number>} [lazy] lines that continue a quote's or list item's paragraph without its
 * marker (CommonMark's laziness): paragraph text, never a setext underline
 * @param {number} [depth] how many quotes and list items hold the text; past MAX_NESTING it is
 * plain text
 * @returns {Block[]}
 */
function parseBlocks(text, lazy = new Set(), depth = 0) {
  if (depth > MAX_NESTING) return text.trim() ? [{ src: text, build: () => plainParagraph(text) }] : [];
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
    if ((m = heading(line))) {
      const { level, content } = m;
      i++;
      out.push({
        src: line,
        build: () => h(`h${Math.min(6, level + 1)}`, { class: "md-h", dir: AUTO }, inline(content)),
      });
      continue;
    }
    if (RULE.test(line)) {
      i++;
      out.push({ src: line, build: () => h("hr") });
      continue;
    }
    if (QUOTE.test(line)) {
      /** @type {Set<number>} the quote's lazy lines, by their index in the quote */
      const lazyInner = new Set();
      /** @type {QuoteState} */
      let state = {
        open: false,
        fence: "",
        fenceIndent: 0,
        fenceItems: 0,
        items: [],
        table: false,
        head: "",
        first: false,
      };
      while (i < lines.length && lines[i].trim()) {
        if (QUOTE.test(lines[i])) state = quoted(lines[i].replace(QUOTE, ""), state);
        // A line without ">" continues the quote's open paragraph, unless it starts a block of its own.
        else if (state.open && !startsBlock(lines[i]) && !tableStarts(lines, i)) {
          lazyInner.add(i - start);
          state = { ...state, head: lines[i], first: false };
        } else break;
        i++;
      }
      for (const l of lazy) if (l >= start && l < i) lazyInner.add(l - start);
      const inner = lines
        .slice(start, i)
        .map((l) => l.replace(QUOTE, ""))
        .join("\n");
      out.push({
        src: lines.slice(start, i).join("\n"),
        build: () =>
          h(
            "blockquote",
            { dir: direction(inner) },
            parseBlocks(inner, lazyInner, depth + 1).map((b) => b.build()),
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
        if (indentOf(l) <= indent && !ITEM.test(l) && (startsBlock(l) || tableStarts(lines, i))) break;
        i++;
      }
      const itemLines = lines.slice(start, i);
      out.push({ src: itemLines.join("\n"), build: () => list(itemLines, indent, depth) });
      continue;
    }
    i++;
    /** @param {number} n */
    const underline = (n) => SETEXT.test(lines[n]) && !lazy.has(n);
    while (i < lines.length && lines[i].trim() && !underline(i) && !startsBlock(lines[i]) && !tableStarts(lines, i))
      i++;
    const para = lines.slice(start, i).join("\n");
    if (i < lines.length && underline(i)) {
      // A setext heading: the paragraph's lines, one level per `#` as an ATX heading would have.
      const level = lines[i].trim()[0] === "=" ? 1 : 2;
      const content = para
        .split("\n")
        .map((l) => l.trim())
        .join("\n");
      i++;
      out.push({
        src: lines.slice(start, i).join("\n"),
        build: () => h(`h${level + 1}`, { class: "md-h", dir: AUTO }, inline(content)),
      });
      continue;
    }
    out.push({ src: para, build: () => h("p", { dir: AUTO }, inline(para.trim())) });
  }
  return out;
}

/** Text nested too deep to read as markdown: one paragraph of its lines as written. @param {string} text */
function plainParagraph(text) {
  return h(
    "p",
    { dir: AUTO },
    text
      .trim()
      .split("\n")
      .map((l, n) => (n ? [h("br"), l] : l)),
  );
}

/** @param {string} l */
const indentOf = (l) => /** @type {RegExpExecArray} */ (/^ */.exec(l.replace(/\t/g, "    ")))[0].length;

/**
 * Where a quote is after one of its lines: whether it ends in a paragraph a lazy line may continue;
 * the fence it is inside, if any (its indent: the text's of the list item it is in, and how many
 * items are open around it); the list items open (their marker's and their text's indent); whether
 * it is in a table; and its paragraph's last line (`head`, and whether that is the paragraph's
 * first), which a delimiter row makes a table's header.
 * @typedef {{ marker: number, content: number }} OpenItem
 * @typedef {{ open: boolean, fence: string, fenceIndent: number, fenceItems: number, items: OpenItem[],
 *   table: boolean, head: string, first: boolean }} QuoteState
 */

/**
 * What a quote holds after one more of its lines (`>` taken off).
 * @param {string} content @param {QuoteState} state @returns {QuoteState}
 */
function quoted(content, state) {
  return quotedLine(content.replace(QUOTES, ""), state);
}

/**
 * One line of a quote, its markers taken off: list items follow their text's indent, so a fence
 * indented 4+ spaces inside an item still opens and closes, and a table's rows are no paragraph.
 * @param {string} c @param {QuoteState} state @returns {QuoteState}
 */
function quotedLine(c, state) {
  const at = indentOf(c);
  const item = c.trim() ? ITEM.exec(c) : null;
  // An item ends the items its marker is not inside; a block before an item's text ends that item.
  let n = state.items.length;
  if (item) while (n > 0 && state.items[n - 1].content > at) n--;
  else if (c.trim() && startsBlock(c)) while (n > 0 && state.items[n - 1].marker >= at) n--;
  const items = state.items.slice(0, n);
  const base = { ...state, items, open: false, table: false, head: "", first: false };
  /** @param {number} k */
  const dedent = (k) => c.replace(new RegExp(`^ {0,${k}}`), "");
  if (state.fence && n >= state.fenceItems) {
    const closes = new RegExp(`^ {0,3}${state.fence[0]}{${state.fence.length},}\\s*$`).test(dedent(state.fenceIndent));
    return { ...base, fence: closes ? "" : state.fence };
  }
  const outer = items.length ? items[items.length - 1].content : 0;
  const rel = dedent(outer);
  const noFence = { ...base, fence: "", fenceIndent: 0, fenceItems: 0 };
  if (!rel.trim()) return noFence;
  if (state.table && rel.includes("|")) return { ...noFence, table: true };
  const header =
    state.open &&
    state.head.includes("|") &&
    TABLE_SEP.test(rel) &&
    rel.includes("-") &&
    (state.first || cells(state.head).length === cells(rel).length);
  if (header) return { ...noFence, table: true };
  const fence = FENCE.exec(rel);
  if (fence) return { ...noFence, fence: fence[1], fenceIndent: outer, fenceItems: items.length };
  if (heading(rel) || RULE.test(rel) || (state.open && SETEXT.test(rel))) return noFence;
  // Items nested past MAX_NESTING are text, as they render: no item is opened for them.
  const own = item && items.length < MAX_NESTING ? ITEM.exec(rel) : null;
  if (own) {
    // The item's text is a line of its own, at the item's text's indent.
    const content = at + own[2].length + 1;
    return quotedLine(" ".repeat(content) + own[3], { ...noFence, items: [...items, { marker: at, content }] });
  }
  return { ...noFence, open: true, head: rel, first: !state.open };
}

/** @param {string} l */
function startsBlock(l) {
  return FENCE.test(l) || heading(l) !== null || QUOTE.test(l) || ITEM.test(l) || RULE.test(l);
}

/**
 * Whether a table starts at line `i` in the middle of a paragraph or list item: a row with a pipe,
 * then a separator row of as many cells (so a line with a pipe before a rule stays text).
 * @param {string[]} lines @param {number} i
 */
function tableStarts(lines, i) {
  const head = lines[i];
  const sep = lines[i + 1];
  return (
    head.includes("|") &&
    sep !== undefined &&
    TABLE_SEP.test(sep) &&
    sep.includes("-") &&
    cells(head).length === cells(sep).length
  );
}

/**
 * A heading line's level and text: what /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/ read, without
 * its lazy text trying the ending at every position (quadratic in a line of spaces).
 * @param {string} line @returns {{ level: number, content: string } | null}
 */
function heading(line) {
  const m = HEADING_START.exec(line);
  if (!m) return null;
  const rest = line.slice(m[0].length);
  const text = rest.trimEnd().length;
  // The text ends before trailing whitespace, or before whitespace and a closing run of #.
  let end = text;
  let hashes = text;
  while (hashes > 0 && rest[hashes - 1] === "#") hashes--;
  let space = hashes;
  while (hashes < text && space > 0 && /\s/.test(rest[space - 1])) space--;
  if (space < hashes) end = space;
  const content = rest.slice(0, end);
  return /[\n\r\u2028\u2029]/.test(content) ? null : { level: m[1].length, content };
}

/** @param {string[]} lines @param {number} indent @param {number} depth how many quotes and items hold the list */
function list(lines, indent, depth) {
  const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[0]));
  const ordered = /\d/.test(first[2]);
  const contentIndent = indent + first[2].length + 1;
  /** @type {string[][]} */
  const items = [];
  /** @type {Set<number>[]} each item's lazy lines: less indented than its text, and no item */
  const lazy = [];
  for (const l of lines) {
    const m = ITEM.exec(l);
    if (m && m[1].length <= indent + 1) items.push([m[3]]), lazy.push(new Set());
    else if (items.length) {
      if (!m && indentOf(l) < contentIndent) lazy[lazy.length - 1].add(items[items.length - 1].length);
      items[items.length - 1].push(l.slice(Math.min(indentOf(l), contentIndent)));
    }
  }
  const attrs =
    ordered && Number.parseInt(first[2], 10) !== 1 ? { start: String(Number.parseInt(first[2], 10)) } : null;
  return h(
    ordered ? "ol" : "ul",
    attrs,
    items.map((item, n) => {
      const task = /^\[([ xX])\]\s+/.exec(item[0]);
      if (task) item[0] = item[0].slice(task[0].length);
      const body = item.join("\n");
      // A tight item is its inline text; one with nested blocks renders them.
      const nested = item.length > 1 ? parseBlocks(body, lazy[n], depth + 1).map((b) => b.build()) : [inline(body)];
      const unwrapped =
        nested.length && nested[0] instanceof HTMLParagraphElement && item.length > 1
          ? [...nested[0].childNodes, ...nested.slice(1)]
          : nested;
      return h(
        "li",
        { class: task ? "task" : null, dir: AUTO },
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
      cells(row).map((c, i) => h(tag, { class: align[i] ? `al-${align[i]}` : null, dir: AUTO }, inline(c))),
    );
  return h(
    "div",
    // The direction is the scroller's: a right-to-left table wider than the message starts scrolled
    // to its first column, on the right.
    { class: "table-wrap", dir: direction(rows.join("\n")), tabindex: "0", role: "region", "aria-label": "table" },
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

/** The pending timer that puts each Copy button's resting label back. */
const copyTimers = new WeakMap();

/**
 * Copies to the clipboard and says so on the button for a moment. The resting label is kept once
 * (in `data-label`), so a second click while it says "Copied" still returns it to "Copy".
 * @param {string} text @param {HTMLElement} button
 */
export async function copyText(text, button) {
  button.dataset.label ??= button.textContent ?? "";
  const label = button.dataset.label;
  clearTimeout(copyTimers.get(button));
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Copy failed";
  }
  clearTimeout(copyTimers.get(button));
  copyTimers.set(
    button,
    setTimeout(() => (button.textContent = label), 1500),
  );
}

// Code spans bind first (CommonMark): they are cut out before the rest is read, so a `*` before
// one never opens emphasis across it, and put back where their placeholder lands.
// Inline markdown is read by hand, not by one regexp of lazy alternatives: `**a **a **a …` made
// every unclosed opener scan to the end of the paragraph (quadratic). Each reading below matches
// what these patterns did, in their order, but looks for a closer once per kind and position:
//   code     (`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)
//   strongEm \*\*\*(?=\S)[\s\S]*?\S\*\*\*      strong  \*\*(?=\S)[\s\S]*?\S\*\*
//   strongU  __(?=\S)[\s\S]*?\S__(?!\w)        del     ~~(?=\S)[\s\S]*?\S~~
//   em       \*(?=[^\s*])[\s\S]*?[^\s*]\*      emU     (?<![\w_])_(?=[^\s_])[\s\S]*?[^\s_]_(?![\w_])
//   link     \[([^\]\n]+)\]\( + LINK_TAIL      auto    <((?:https?:\/\/|mailto:)[^>\s]+)>
//   bare     https?:\/\/[^\s<]*[^\s<.,;:!?)\]'"*_~]
//   escaped  \\([\\`*_{}[\]()#+\-.!|~>])       br      ( {2,}|\\)\n|\n
const SLOT = /\uE000(\d+)\uE001/g;
// A link's address may hold balanced parentheses: /wiki/Foo_(bar).
const LINK_TAIL = /\s*<?((?:[^\s()<>]|\([^\s()<>]*\))+)>?(?:\s+"[^"\n]*")?\s*\)/y;
const SPECIAL = /[*_~[<h\\ \n]/g;
const ESCAPABLE = "\\`*_{}[]()#+-.!|~>";
// What a bare address may not end in (nor hold: whitespace and "<").
const BARE_END = ".,;:!?)]'\"*_~";

/** @param {string | undefined} c */
const isSpace = (c) => c !== undefined && /\s/.test(c);
/** @param {string | undefined} c */
const notSpace = (c) => c !== undefined && !/\s/.test(c);
/** @param {string | undefined} c */
const isWord = (c) => c !== undefined && /\w/.test(c);

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
  return spans(slotCode(text, codes), codes, { depth: 0 });
}

/**
 * Code spans cut out into `codes`, a placeholder in their place. A run of n backticks (or the rest
 * of a run, from any of its backticks) opens a span closed by the next run of exactly n; runs are
 * indexed by length once, so each opener finds its closer without scanning.
 * @param {string} text @param {string[]} codes
 */
function slotCode(text, codes) {
  /** @type {number[]} */
  const starts = [];
  /** @type {number[]} */
  const lens = [];
  for (let i = text.indexOf("`"); i >= 0; ) {
    let j = i;
    while (text[j] === "`") j++;
    starts.push(i);
    lens.push(j - i);
    i = text.indexOf("`", j);
  }
  if (!starts.length) return text;
  /** Run numbers by length, in order, and how far each list has been passed. @type {Map<number, { runs: number[], at: number }>} */
  const byLength = new Map();
  lens.forEach((n, r) => {
    const entry = byLength.get(n) ?? { runs: [], at: 0 };
    entry.runs.push(r);
    byLength.set(n, entry);
  });
  let out = "";
  let last = 0;
  for (let r = 0; r < starts.length; r++) {
    const end = starts[r] + lens[r];
    for (let p = starts[r]; p < end; p++) {
      const entry = byLength.get(end - p);
      if (!entry) continue;
      while (entry.at < entry.runs.length && entry.runs[entry.at] <= r) entry.at++;
      if (entry.at === entry.runs.length) continue;
      const q = entry.runs[entry.at];
      const code = text.slice(end, starts[q]);
      out += `${text.slice(last, p)}\uE000${codes.push(code.replace(/^ (.*) $/, "$1")) - 1}\uE001`;
      last = starts[q] + lens[q];
      r = q;
      break;
    }
  }
  return out + text.slice(last);
}

/**
 * Where closers are in one text, each kind looked for from where its last look stopped.
 * @param {string} text
 */
function closers(text) {
  /** @type {Map<string, { from: number, at: number }>} */
  const cache = new Map();
  /**
   * The first position at or after `from` that `delim` starts at and `ok` accepts, or -1; `from`
   * only grows between calls with one key, so the text is scanned once per key.
   * @param {string} key @param {string} delim @param {number} from @param {(q: number) => boolean} ok
   */
  const next = (key, delim, from, ok) => {
    const c = cache.get(key);
    if (c && from >= c.from && (c.at < 0 || c.at >= from)) return c.at;
    let q = text.indexOf(delim, from);
    while (q >= 0 && !ok(q)) q = text.indexOf(delim, q + 1);
    cache.set(key, { from, at: q });
    return q;
  };
  /**
   * The first position at or after `from` whose character `ok` accepts (text.length if none).
   * @param {string} key @param {number} from @param {(c: string) => boolean} ok
   */
  const nextWhere = (key, from, ok) => next(key, "", from, (q) => q >= text.length || ok(text[q]));
  /** @type {{ at: number, found: { href: string, end: number } | null } | null} */
  let tail = null;
  /**
   * A link's address, title and ")" from `at` (just after its "("): read once, however many "["
   * share it.
   * @param {number} at
   */
  const linkTail = (at) => {
    if (tail?.at !== at) {
      LINK_TAIL.lastIndex = at;
      const m = LINK_TAIL.exec(text);
      tail = { at, found: m ? { href: m[1], end: at + m[0].length } : null };
    }
    return tail.found;
  };
  return { next, nextWhere, linkTail };
}

/**
 * The inline span at p, if one starts there: its kind, its inner text, where it ends.
 * @param {string} text @param {number} p @param {ReturnType<typeof closers>} find
 * @returns {{ kind: string, inner?: string, href?: string, end: number } | null}
 */
function spanAt(text, p, find) {
  const c = text[p];
  /** A span `delim`…`delim` whose closer follows a character `before` accepts. @param {string} kind @param {string} delim @param {(q: number) => boolean} ok */
  const delimited = (kind, delim, ok) => {
    const q = find.next(kind, delim, p + delim.length + 1, ok);
    return q < 0 ? null : { kind, inner: text.slice(p + delim.length, q), end: q + delim.length };
  };
  if (c === "*") {
    if (text.startsWith("***", p) && notSpace(text[p + 3])) {
      const m = delimited("strongEm", "***", (q) => notSpace(text[q - 1]));
      if (m) return m;
    }
    if (text.startsWith("**", p) && notSpace(text[p + 2])) {
      const m = delimited("strong", "**", (q) => notSpace(text[q - 1]));
      if (m) return m;
    }
    if (notSpace(text[p + 1]) && text[p + 1] !== "*")
      return delimited("em", "*", (q) => notSpace(text[q - 1]) && text[q - 1] !== "*");
    return null;
  }
  if (c === "_") {
    if (text.startsWith("__", p) && notSpace(text[p + 2])) {
      const m = delimited("strongU", "__", (q) => notSpace(text[q - 1]) && !isWord(text[q + 2]));
      if (m) return m;
    }
    if (!isWord(text[p - 1]) && notSpace(text[p + 1]) && text[p + 1] !== "_")
      return delimited("emU", "_", (q) => notSpace(text[q - 1]) && text[q - 1] !== "_" && !isWord(text[q + 1]));
    return null;
  }
  if (c === "~") {
    if (text.startsWith("~~", p) && notSpace(text[p + 2])) return delimited("del", "~~", (q) => notSpace(text[q - 1]));
    return null;
  }
  if (c === "[") {
    const r = find.nextWhere("labelEnd", p + 1, (ch) => ch === "]" || ch === "\n");
    if (r === p + 1 || text[r] !== "]" || text[r + 1] !== "(") return null;
    const tail = find.linkTail(r + 2);
    return tail && { kind: "link", inner: text.slice(p + 1, r), href: tail.href, end: tail.end };
  }
  if (c === "<") {
    const prefix = /^(?:https?:\/\/|mailto:)/.exec(text.slice(p + 1, p + 9));
    if (!prefix) return null;
    const from = p + 1 + prefix[0].length;
    const e = find.nextWhere("autoEnd", from, (ch) => ch === ">" || isSpace(ch));
    return e > from && text[e] === ">" ? { kind: "auto", inner: text.slice(p + 1, e), end: e + 1 } : null;
  }
  if (c === "h") {
    const prefix = /^https?:\/\//.exec(text.slice(p, p + 8));
    if (!prefix) return null;
    const from = p + prefix[0].length;
    let j = find.nextWhere("bareEnd", from, (ch) => ch === "<" || isSpace(ch)) - 1;
    while (j >= from && BARE_END.includes(text[j])) j--;
    return j >= from ? { kind: "bare", inner: text.slice(p, j + 1), end: j + 1 } : null;
  }
  if (c === "\\") {
    if (text[p + 1] !== undefined && ESCAPABLE.includes(text[p + 1]))
      return { kind: "escaped", inner: text[p + 1], end: p + 2 };
    return text[p + 1] === "\n" ? { kind: "br", end: p + 2 } : null;
  }
  if (c === " ") {
    const e = find.nextWhere("spacesEnd", p, (ch) => ch !== " ");
    return e - p >= 2 && text[e] === "\n" ? { kind: "br", end: e + 1 } : null;
  }
  if (c === "\n") return { kind: "br", end: p + 1 };
  return null;
}

/**
 * The inline spans of text whose code spans are placeholders. In a link's label (`inLink`) an
 * address stays text: a link inside a link is invalid HTML, and the browser would split the two.
 * @param {string} text @param {string[]} codes @param {{ depth: number, inLink?: boolean }} at
 * @returns {(Node | string)[]}
 */
function spans(text, codes, { depth, inLink = false }) {
  if (depth > MAX_NESTING) return withCode(text, codes);
  /** @type {(Node | string)[]} */
  const out = [];
  let last = 0;
  const find = closers(text);
  const inner = (/** @type {string} */ s, link = inLink) => spans(s, codes, { depth: depth + 1, inLink: link });
  for (let p = 0; p < text.length; ) {
    SPECIAL.lastIndex = p;
    const s = SPECIAL.exec(text);
    if (!s) break;
    p = s.index;
    const m = spanAt(text, p, find);
    if (!m) {
      p++;
      continue;
    }
    const address = m.kind === "link" || m.kind === "auto" || m.kind === "bare";
    if (inLink && address) {
      p = m.end;
      continue;
    }
    if (p > last) out.push(...withCode(text.slice(last, p), codes));
    last = m.end;
    const g = m.inner ?? "";
    if (m.kind === "strongEm") out.push(h("strong", null, h("em", null, inner(g))));
    else if (m.kind === "strong" || m.kind === "strongU") out.push(h("strong", null, inner(g)));
    else if (m.kind === "del") out.push(h("del", null, inner(g)));
    else if (m.kind === "em" || m.kind === "emU") out.push(h("em", null, inner(g)));
    else if (m.kind === "link") out.push(safeLink(/** @type {string} */ (m.href), inner(g, true)));
    else if (m.kind === "auto") out.push(safeLink(g, [g.replace(/^mailto:/, "")]));
    else if (m.kind === "bare") {
      // A bare URL keeps a closing parenthesis that balances one it holds: …/Foo_(bar).
      let url = g;
      const opened = url.split("(").length - 1;
      let closed = url.split(")").length - 1;
      while (text[last] === ")" && opened > closed) {
        url += ")";
        closed++;
        last++;
      }
      out.push(safeLink(url, [url]));
    } else if (m.kind === "escaped") out.push(g);
    else out.push(h("br"));
    p = last;
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
