// Building DOM without innerHTML: every string becomes a text node, so model and user content is
// never parsed as markup.

/**
 * h("div", {class: "x", onclick: fn, "data-id": id}, "text", child, [more])
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} children
 * @returns {HTMLElement}
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k in el && typeof v !== "string") /** @type {any} */ (el)[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

/** @param {Node} el @param {any[]} children */
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** @param {Element} el @param {...any} children */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

const nf = new Intl.NumberFormat("en");
export const num = (/** @type {number} */ n) => nf.format(Math.round(n ?? 0));

export function chars(/** @type {number} */ n) {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)}M chars`;
  if (n >= 10_000) return `${(n / 1024).toFixed(1)}K chars`;
  return `${num(n)} chars`;
}

export function bytes(/** @type {number} */ n) {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${num(n)} B`;
}

export function time(/** @type {string} */ iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString();
}
