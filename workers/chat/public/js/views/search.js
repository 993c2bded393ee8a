// Search across the tenant's conversations: each hit names its conversation and who said it, and
// opens History at that message.
import { api, plainError } from "../api.js";
import { h, replace, time } from "../dom.js";
import { errorLine } from "../render.js";

/**
 * A hit's snippet with its matches shown as <mark> through text nodes only. The API marks each match
 * `[match]` and says where (`matches`: [start, end] of each, brackets included), so brackets of the
 * text itself stay text; a hit without `matches` shows no mark.
 * @param {string} s @param {unknown} matches
 */
function snippet(s, matches) {
  const out = [];
  let last = 0;
  for (const m of Array.isArray(matches) ? matches : []) {
    const [start, end] = /** @type {[number, number]} */ (m);
    if (!(start >= last && end - start >= 2 && end <= s.length)) continue;
    out.push(s.slice(last, start), h("mark", null, s.slice(start + 1, end - 1)));
    last = end;
  }
  out.push(s.slice(last));
  return out;
}

/** Who a hit's words are from (the hit's `from`). @param {any} r */
function speaker(r) {
  if (r.kind === "memory") return "Saved note";
  if (r.kind === "episode") return "Summary";
  if (r.kind === "page") return `PDF page ${r.seq ?? ""}`.trim();
  // `from` says whose words they are: a user message that carries tool results (or a sub-agent's
  // task) has role "user" as the transcript has it, though no person typed it.
  if (r.from === "assistant" || r.role === "assistant") return "Assistant";
  if (r.from === "tool") return "Tool result";
  return r.role === "user" ? "You" : "Message";
}

/** Hits asked for at a time; the rest come a page at a time with "Load more". */
const PAGE = 50;

/** @param {HTMLElement} root @param {URLSearchParams} params */
export async function searchView(root, params) {
  const q = (params.get("q") ?? "").trim();
  const input = /** @type {HTMLInputElement} */ (document.getElementById("search-q"));
  if (input) input.value = q;
  const results = h("ol", { class: "results", id: "search-results" });
  const status = h("p", { class: "muted", id: "search-status", role: "status" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "ghost", id: "search-more", hidden: true }, "Load more")
  );
  replace(root, h("section", { class: "panel" }, h("h1", null, q ? `Search: ${q}` : "Search"), status, results, more));
  document.title = `Search · context-chat`;
  if (!q) return replace(status, "Type words in the search box above.");
  /** @type {Map<string, Promise<string>>} */
  const titles = new Map();
  /** @param {string} id */
  const titleOf = (id) => {
    if (!titles.has(id))
      titles.set(
        id,
        api("GET", `/v1/conversations/${id}`).then(
          (c) => c.title || "New chat",
          () => "A deleted chat",
        ),
      );
    return /** @type {Promise<string>} */ (titles.get(id));
  };
  let shown = 0;
  let busy = false;
  /**
   * One page of hits, after those shown (`cursor`, the server's `next`): the count says "50+"
   * while the server has more, which "Load more" brings. The button is marked aria-disabled while
   * a page loads, not `disabled`: a disabled button loses the focus (to the body), and a person
   * who pressed it from the keyboard would lose their place.
   * @param {string | null} cursor
   */
  const load = async (cursor) => {
    if (busy) return;
    busy = true;
    more.setAttribute("aria-disabled", "true");
    try {
      const res = await api(
        "GET",
        `/v1/search?q=${encodeURIComponent(q)}&limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (!shown && !res.data.length) return replace(status, "No matches.");
      const rows = await Promise.all(res.data.map((/** @type {any} */ r) => hit(r, titleOf)));
      results.append(...rows);
      shown += rows.length;
      replace(status, `${shown}${res.next ? "+" : ""} match${shown === 1 && !res.next ? "" : "es"}`);
      // The button goes with the last page: the focus it held moves to the first hit that page
      // brought, its link, or the row itself when it has none (a note, a project file's page).
      const hadFocus = document.activeElement === more;
      more.hidden = !res.next;
      more.onclick = () => load(res.next);
      if (hadFocus && more.hidden && rows[0]) {
        const link = /** @type {HTMLElement | null} */ (rows[0].querySelector("a"));
        if (!link) rows[0].tabIndex = -1;
        (link ?? rows[0]).focus();
      }
    } catch (err) {
      replace(status, errorLine(plainError(err).text));
    } finally {
      busy = false;
      more.removeAttribute("aria-disabled");
    }
  };
  await load(null);
}

/**
 * A hit as a list row: where it is (opening History at the message) and who said it.
 * @param {any} r @param {(id: string) => Promise<string>} titleOf
 */
async function hit(r, titleOf) {
  const href = r.conversationId
    ? r.messageId
      ? `#/c/${r.conversationId}/history?at=${encodeURIComponent(r.messageId)}`
      : `#/c/${r.conversationId}/history`
    : null;
  const where = r.conversationId ? await titleOf(r.conversationId) : r.kind === "memory" ? "Memory" : "Project file";
  return h(
    "li",
    { class: "hit" },
    h(
      "div",
      { class: "hit-head" },
      href ? h("a", { href, class: "hit-link" }, where) : h("strong", null, where),
      " ",
      h("span", { class: "muted" }, `${speaker(r)} · ${time(r.createdAt)}`),
    ),
    h("div", { class: "snippet" }, snippet(r.snippet ?? "", r.matches)),
  );
}
