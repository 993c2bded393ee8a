// What the Automations and API keys forms share: a labelled field with a hint it is described by,
// a refusal told in the form's words (as Settings does: each field a 400 names is shown by its
// label, marked invalid, and the focus goes to the first one), and small formatting helpers.
import { api } from "../api.js";
import { h, replace } from "../dom.js";
import { errorLine } from "../render.js";

/**
 * A field: its label over the control, and a hint under it that the control is described by (a
 * wrapping <label> would read the hint as part of the name).
 * @param {string} label
 * @param {HTMLElement} input a control with an id
 * @param {string} [hint]
 */
export function field(label, input, hint) {
  const note = hint ? h("span", { class: "field-hint", id: `${input.id}-hint` }, hint) : null;
  if (note) input.setAttribute("aria-describedby", note.id);
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input, note);
}

/** @typedef {Map<string, { label: string, input: HTMLElement }>} Labelled each field the API may name, by its name there */

/**
 * The API's refusal in the form's words: a 400 names each field at the start of its issue
 * (`schedule: not a cron expression: …; name: required`); each one the form has is shown as its
 * label instead, marked `aria-invalid`, and the focus goes to the first.
 * @param {string} text @param {Labelled} fields
 */
export function inFormWords(text, fields) {
  /** @type {HTMLElement | null} */
  let first = null;
  const said = text.replace(/(^|; )(\w+):/g, (whole, /** @type {string} */ lead, /** @type {string} */ key) => {
    const f = fields.get(key);
    if (!f) return whole;
    f.input.setAttribute("aria-invalid", "true");
    first ??= f.input;
    return `${lead}"${f.label}":`;
  });
  /** @type {HTMLElement | null} */ (first)?.focus();
  return said;
}

/** Clears what the last refusal marked. @param {Labelled} fields */
export function clearInvalid(fields) {
  for (const f of fields.values()) f.input.removeAttribute("aria-invalid");
}

/**
 * The first of `fields` left empty (after trimming), marked and focused, or null.
 * @param {Labelled} fields @param {string[]} required names in the form's order
 * @returns {string | null} its label
 */
export function firstEmpty(fields, required) {
  for (const key of required) {
    const f = fields.get(key);
    const input = /** @type {HTMLInputElement | HTMLTextAreaElement | undefined} */ (f?.input);
    if (!f || !input || input.value.trim()) continue;
    input.setAttribute("aria-invalid", "true");
    input.focus();
    return f.label;
  }
  return null;
}

/**
 * One request at a time from a button: a second press while it runs does nothing. aria-disabled,
 * not disabled: a disabled button would drop the keyboard focus to the top of the page.
 * @param {HTMLElement} button @param {() => Promise<void>} work
 */
export function oneAtATime(button, work) {
  let running = false;
  return async () => {
    if (running) return;
    running = true;
    button.setAttribute("aria-disabled", "true");
    try {
      await work();
    } finally {
      running = false;
      button.removeAttribute("aria-disabled");
    }
  };
}

/** A date-time in the reader's own time, in a <time> that keeps the exact instant. @param {string} iso */
export function when(iso) {
  const d = new Date(iso);
  return h("time", { datetime: iso }, Number.isNaN(d.getTime()) ? iso : d.toLocaleString());
}

/** A date-time in UTC, as schedules are written: "2026-12-07 10:00 UTC". @param {string} iso */
export function inUtc(iso) {
  const d = new Date(iso);
  const text = Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return h("time", { datetime: iso }, text);
}

/**
 * What a <input type=datetime-local> holds ("2026-12-08T10:30", the browser's own time zone) as
 * an ISO date-time with that zone's offset at that moment ("2026-12-08T10:30:00+01:00"), or null
 * when it holds nothing the browser reads as a date.
 * @param {string} value
 */
export function localToIso(value) {
  const d = new Date(value);
  if (!value || Number.isNaN(d.getTime())) return null;
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const abs = Math.abs(offset);
  const date = `${String(d.getFullYear()).padStart(4, "0")}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${date}T${clock}${offset < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * An inline confirm: the question, the `yes` button and Keep, as one labelled group; Keep or Escape
 * calls `keep` (which puts back what the confirm replaced).
 * @param {{ label: string, question: string, yes: HTMLElement, keep: () => void }} opts
 */
export function confirmGroup({ label, question, yes, keep }) {
  const group = h(
    "div",
    { class: "confirm", role: "group", "aria-label": label },
    question,
    yes,
    h("button", { type: "button", class: "small ghost", onclick: keep }, "Keep"),
  );
  group.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      keep();
    }
  });
  return group;
}

/**
 * A listing read page by page into `list` (`GET <path>?limit=&cursor=`, `next` as the cursor): each
 * row drawn by `item`, Load more shown while there is a next page, a failure said in `status`, and
 * nothing drawn once `signal` is aborted. When Load more goes with the last page while it had the
 * focus, `focusFirst` gets the first item that page brought (or null), so the focus stays near.
 * @param {{ path: string, limit: number, list: HTMLElement, more: HTMLElement, status: HTMLElement,
 *   empty?: HTMLElement, item: (row: any) => Node, said: (err: unknown) => string,
 *   focusFirst: (first: Element | null) => void, signal?: AbortSignal }} o
 */
export async function pagedList(o) {
  /** @param {string | undefined} cursor */
  async function load(cursor) {
    const hadFocus = document.activeElement === o.more;
    const before = o.list.children.length;
    try {
      const page = await api(
        "GET",
        `${o.path}?limit=${o.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (o.signal?.aborted) return;
      for (const row of page.data) o.list.append(o.item(row));
      if (o.empty) o.empty.hidden = o.list.children.length > 0;
      o.more.hidden = !page.next;
      o.more.onclick = oneAtATime(o.more, () => load(page.next));
    } catch (err) {
      if (!o.signal?.aborted) replace(o.status, errorLine(o.said(err)));
    }
    if (hadFocus && o.more.hidden) o.focusFirst(o.list.children[before] ?? null);
  }
  await load(undefined);
}
