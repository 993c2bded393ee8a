// The sidebar: "New chat" and the tenant's conversations by last activity, each renamed or deleted
// in place. Reloaded whenever a conversation changes here (prefs.js conversationsChanged), when the
// tab comes back into view or gets the focus, and every minute while it is shown.
import { api, plainError, session } from "../api.js";
import { h, replace } from "../dom.js";
import { conversationsChanged } from "../prefs.js";

/** The most recently active conversations the sidebar lists (the server orders them: `?order=activity`). */
const LISTED = 100;
/** How long a title set here is shown over the listing's (which has it just after the rename answers). */
const BRIDGE_MS = 10_000;
/** How often the list is read again while the tab is shown, for activity from other clients. */
const REFRESH_MS = 60_000;

/** @param {HTMLElement} nav */
export function mountSidebar(nav) {
  const list = h("ul", { class: "conversation-list", id: "conversation-list" });
  const status = h("p", { class: "muted sidebar-status" });
  replace(
    nav,
    h("a", { class: "button primary new-chat", id: "new-chat", href: "#/" }, "+ New chat"),
    h("h2", { class: "sidebar-title" }, "Chats"),
    list,
    status,
    h("a", { class: "sidebar-link", href: "#/manage" }, "Import, export and all chats"),
  );

  /**
   * Titles set here that the listing has not caught up with (it may lag a rename by a moment). Only
   * a bridge: an entry goes once the listing shows its title, or after BRIDGE_MS, so a later rename
   * elsewhere (another tab, the API) shows on the next reload. @type {Map<string, { title: string, at: number }>}
   */
  const titled = new Map();

  /** Loads may overlap (a turn's end reloads twice): only the latest one renders. */
  let loads = 0;
  /** A reload while a rename or a delete confirm is open waits until it closes (it would wipe it). */
  let deferred = false;
  const busy = () => !!list.querySelector(".rename-form, .confirm");
  const loadIfDeferred = () => {
    if (deferred) load();
  };
  async function load() {
    if (busy()) return void (deferred = true);
    deferred = false;
    const mine = ++loads;
    try {
      const page = await api("GET", `/v1/conversations?order=activity&limit=${LISTED}`);
      if (mine !== loads) return;
      if (busy()) return void (deferred = true);
      /** @type {any[]} */
      const rows = page.data.map((/** @type {any} */ c) => {
        const set = titled.get(c.id);
        if (set && set.title !== c.title && Date.now() - set.at <= BRIDGE_MS) return { ...c, title: set.title };
        titled.delete(c.id);
        return c;
      });
      // The focus inside the list stays on its row's same control across the redraw.
      const active = document.activeElement;
      const row = active && list.contains(active) ? active.closest("li") : null;
      const kept = row && active ? { id: row.dataset.id, cls: [...active.classList].join(".") } : null;
      replace(list, rows.map(item));
      replace(status, rows.length ? "" : "No chats yet.");
      markCurrent();
      if (kept)
        /** @type {HTMLElement | null} */ (
          list.querySelector(`li[data-id="${kept.id}"] .${kept.cls}`) ?? list.querySelector(".conv-link")
        )?.focus();
    } catch (err) {
      replace(status, plainError(err).text);
    }
  }

  /**
   * Signed out: the list, its status line and the titles set here go, and a load still under way
   * draws nothing, so whoever signs in next in this tab (another tenant's key) never sees them.
   */
  function clear() {
    loads++;
    deferred = false;
    titled.clear();
    replace(list);
    replace(status);
  }

  /** @param {any} c */
  function item(c) {
    const link = h("a", { class: "conv-link", href: `#/c/${c.id}` }, c.title || "New chat");
    const rename = h(
      "button",
      { type: "button", class: "ghost small rename", "aria-label": `Rename ${c.title || "chat"}` },
      "Rename",
    );
    const del = h(
      "button",
      { type: "button", class: "ghost small delete", "aria-label": `Delete ${c.title || "chat"}` },
      "Delete",
    );
    const actions = h("div", { class: "conv-actions" }, rename, del);
    const li = h("li", { class: "conv", "data-id": c.id }, link, actions);
    rename.addEventListener("click", () => {
      const input = /** @type {HTMLInputElement} */ (
        h("input", { class: "rename-input", value: c.title || "", maxlength: "200", "aria-label": "New name" })
      );
      // Cancel, Escape or a Save puts the row back with the focus on its Rename, where it was.
      const done = () => {
        form.replaceWith(link, actions);
        rename.focus();
        loadIfDeferred();
      };
      const form = h(
        "form",
        { class: "rename-form" },
        input,
        h("button", { type: "submit", class: "small primary" }, "Save"),
        h("button", { type: "button", class: "small ghost", onclick: done }, "Cancel"),
      );
      form.addEventListener("keydown", (e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          done();
        }
      });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        const title = input.value.trim();
        if (!title) return;
        try {
          await api("PATCH", `/v1/conversations/${c.id}`, { title });
          link.textContent = title;
          done();
          conversationsChanged({ id: c.id, title });
          const heading = document.getElementById("chat-title");
          if (heading && location.hash.startsWith(`#/c/${c.id}`)) heading.textContent = title;
        } catch (err) {
          replace(status, plainError(err).text);
        }
      });
      link.replaceWith(form);
      actions.remove();
      input.focus();
      input.select();
    });
    del.addEventListener("click", () => {
      // Keep (or Escape) puts the row back with the focus on its Delete, where it was.
      const keep = () => {
        confirm.replaceWith(actions);
        loadIfDeferred();
        del.focus();
      };
      const confirm = h(
        "div",
        { class: "confirm", role: "group", "aria-label": "Confirm delete" },
        "Delete this chat for good? ",
        h("button", { type: "button", class: "small danger confirm-delete" }, "Delete"),
        h("button", { type: "button", class: "small ghost", onclick: keep }, "Keep"),
      );
      confirm.addEventListener("keydown", (e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          keep();
        }
      });
      const confirmDelete = /** @type {HTMLElement} */ (confirm.querySelector(".confirm-delete"));
      confirmDelete.addEventListener("click", async () => {
        // The focus goes to the next row's link (or the list's first), never to the top of the page.
        const next = /** @type {HTMLElement | null} */ (
          (li.nextElementSibling ?? li.previousElementSibling)?.querySelector(".conv-link") ?? null
        );
        try {
          await api("DELETE", `/v1/conversations/${c.id}`);
          li.remove();
          (next ?? document.getElementById("new-chat"))?.focus();
          if (location.hash.startsWith(`#/c/${c.id}`)) location.hash = "#/";
          conversationsChanged();
        } catch (err) {
          replace(status, plainError(err).text);
        }
      });
      actions.replaceWith(confirm);
      confirmDelete.focus();
    });
    return li;
  }

  function markCurrent() {
    const current = /^#\/c\/(conv_[A-Za-z0-9_-]+)/.exec(location.hash)?.[1];
    for (const li of list.children) {
      const on = /** @type {HTMLElement} */ (li).dataset.id === current;
      li.classList.toggle("current", on);
      li.querySelector(".conv-link")?.toggleAttribute("aria-current", on);
    }
  }

  window.addEventListener("conversations-changed", (e) => {
    const t = /** @type {CustomEvent} */ (e).detail;
    if (t) titled.set(t.id, { title: t.title, at: Date.now() });
    load();
  });
  window.addEventListener("hashchange", markCurrent);
  // Activity from elsewhere (another tab or device, the API, an automation) raises no event here:
  // the order is read again when the person comes back to the tab, and slowly while it is shown.
  // Signed out, there is no list to read (and a refused read would sign out again).
  const refresh = () => {
    if (session.key && document.visibilityState === "visible") load();
  };
  document.addEventListener("visibilitychange", refresh);
  window.addEventListener("focus", refresh);
  setInterval(refresh, REFRESH_MS);
  return { load, clear };
}
