// History: the complete, untouched transcript, a page at a time, with the fold boundary and the
// current summary where they apply, the timeline's compaction cards, and every tool result in
// full (those the next request carries as stubs are marked). ?at=<message id> opens at a message.
import { allPages, api } from "../api.js";
import { chars, h, num, replace } from "../dom.js";
import { errorLine, newContext, renderMessage, resultText, timelineCard } from "../render.js";
import { exportControls } from "./transfer.js";

const PAGE = 100;

/**
 * @param {HTMLElement} root @param {string} id @param {URLSearchParams} params
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws nothing more
 */
export async function historyView(root, id, params, signal) {
  const at = params.get("at");
  // ?limit= sets the page size (the API's limit, at most 500).
  const pageSize = Math.min(500, Math.max(1, Number(params.get("limit")) || PAGE));
  const ctx = newContext();
  const list = h("div", { class: "log history", id: "history" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "secondary", id: "history-more", hidden: true }, "Load more")
  );
  const head = h(
    "div",
    { class: "chat-head" },
    h("h1", null, "History"),
    h(
      "nav",
      null,
      h("a", { href: `#/c/${id}` }, "Chat"),
      h("a", { href: `#/c/${id}/replay` }, "Replay"),
      exportControls(id),
    ),
  );
  const facts = h("p", { class: "muted" });
  replace(root, h("div", { class: "history-view" }, head, facts, list, more));
  document.title = "History · context-chat";

  /** @type {any} */ let meta;
  /** @type {any[]} */ let cards;
  /** @type {any} */ let replay;
  try {
    [meta, cards, replay] = await Promise.all([
      api("GET", `/v1/conversations/${id}`),
      allPages(`/v1/conversations/${id}/timeline`),
      api("GET", `/v1/conversations/${id}/replay`).catch(() => null),
    ]);
  } catch (err) {
    // A load that failed after the person left would put its error line over the next view.
    if (!signal?.aborted) replace(root, errorLine(err));
    return;
  }
  replace(/** @type {HTMLElement} */ (head.firstChild), "History: ", meta.title || id);
  // The tab's title is the next view's once the person has left this one.
  if (!signal?.aborted) document.title = `History · ${meta.title || "New chat"} · context-chat`;
  const folded = meta.summarizedThroughMessage ?? 0;
  replace(
    facts,
    `${num(meta.lastSeq ?? meta.messageCount)} messages · `,
    folded
      ? `folded through #${folded} (${num(meta.foldCount ?? 1)} fold${meta.foldCount === 1 ? "" : "s"}), summary ${chars(meta.summary?.length ?? 0)}`
      : "nothing folded yet",
    meta.foldInFlight ? " · a fold is running" : "",
  );

  // Results the next request replaces with stubs: the transcript still holds them whole.
  const stubbed = new Set();
  if (replay) {
    const originals = new Map();
    for (const m of replay.messages)
      for (const b of Array.isArray(m.content) ? m.content : [])
        if (b.type === "tool_result") originals.set(b.tool_use_id, resultText(b.content));
    ctx.badges = (b) => {
      if (
        b.type === "tool_result" &&
        originals.has(b.tool_use_id) &&
        originals.get(b.tool_use_id) !== resultText(b.content)
      ) {
        stubbed.add(b.tool_use_id);
        return [
          " ",
          h(
            "span",
            {
              class: "badge stub",
              title: "The next model request carries a recovery stub instead; the original is shown here.",
            },
            "stubbed in replay",
          ),
        ];
      }
      return [];
    };
  }

  const bySeq = new Map();
  for (const c of cards) bySeq.set(c.afterSeq, [...(bySeq.get(c.afterSeq) ?? []), c]);
  for (const c of bySeq.get(0) ?? []) list.append(timelineCard(c));

  function foldBoundary() {
    return h(
      "section",
      { class: "fold-boundary", id: "fold-boundary" },
      h(
        "div",
        { class: "fold-line" },
        `Fold boundary: messages #1–#${folded} are summarized; the verbatim tail starts at `,
        h("code", null, meta.summarizedThroughMessageId ?? "?"),
        ".",
      ),
      h(
        "details",
        { class: "summary", open: true },
        h("summary", null, `Current summary (${chars(meta.summary?.length ?? 0)})`),
        h("div", { class: "text" }, meta.summary ?? ""),
      ),
    );
  }

  let after = 0;
  let shown = 0;
  let found = !at;
  async function loadPage() {
    try {
      const page = await api("GET", `/v1/conversations/${id}/messages?after=${after}&limit=${pageSize}`);
      /** @type {HTMLElement | null} */
      let first = null;
      for (const m of page.data) {
        const el = renderMessage(m, ctx);
        first ??= el;
        shown++;
        if (folded && m.seq <= folded) el.classList.add("folded");
        list.append(el);
        for (const c of bySeq.get(m.seq) ?? []) list.append(timelineCard(c));
        if (folded && m.seq === folded) list.append(foldBoundary());
        if (at && m.id === at) {
          found = true;
          el.classList.add("hit");
          for (const d of el.querySelectorAll("details")) d.open = true;
          requestAnimationFrame(() => el.scrollIntoView({ block: "center" }));
        }
      }
      after = page.next ?? after;
      // The button goes with the last page: the focus it held moves to the first message that page brought.
      const hadFocus = document.activeElement === more;
      more.hidden = !page.next;
      if (!page.next) list.append(h("p", { class: "muted end" }, `End of the transcript: ${num(shown)} messages.`));
      if (hadFocus && more.hidden && first) {
        first.tabIndex = -1;
        first.focus();
      }
      return !!page.next;
    } catch (err) {
      list.append(errorLine(err));
      return false;
    }
  }
  let loading = false;
  /** @type {IntersectionObserver | null} */
  let observer = null;
  // While a page loads the button is marked aria-disabled (and `loading` ignores presses), not
  // `disabled`: a disabled button loses the focus to the body, and a keyboard user their place.
  const next = async () => {
    if (loading) return false;
    loading = true;
    more.setAttribute("aria-disabled", "true");
    try {
      return await loadPage();
    } finally {
      loading = false;
      more.removeAttribute("aria-disabled");
      // Observing anew reports the button's current state, so a short page loads the next one too.
      observer?.unobserve(more);
      if (!more.hidden) observer?.observe(more);
    }
  };
  more.addEventListener("click", () => next());
  let hasMore = await next();
  // Opening at a search hit: page on until the message is on screen.
  while (!found && hasMore && !signal?.aborted) hasMore = await next();
  // Reading on: the next page loads as the button comes into view.
  observer = new IntersectionObserver(
    (entries) => {
      if (!more.isConnected) return observer?.disconnect();
      if (!more.hidden && entries.some((e) => e.isIntersecting)) next();
    },
    { rootMargin: "600px" },
  );
  if (!more.hidden) observer.observe(more);
  if (at && !found) list.prepend(errorLine(`message ${at} is not in this conversation`));
  if (!at && folded) document.getElementById("fold-boundary")?.scrollIntoView({ block: "start" });
}
