// The tenant's conversations (newest first, paged) and a form to start one.
import { api } from "../api.js";
import { h, num, replace, time } from "../dom.js";
import { errorLine } from "../render.js";
import { exportAllButton, importPanel } from "./transfer.js";

/** @param {HTMLElement} root */
export async function homeView(root) {
  const list = h("ul", { class: "conversations", id: "conversations" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  const title = h("input", { id: "new-title", name: "title", placeholder: "Title (optional)", maxlength: "200", autocomplete: "off" });
  const settings = h("textarea", { id: "new-settings", name: "settings", rows: "3", placeholder: '{"contextWindowTokens": 24000, "outputReserveTokens": 2000}', spellcheck: "false" });
  const formStatus = h("div");
  const form = h(
    "form",
    { class: "panel new-conversation", id: "new-conversation" },
    h("h2", null, "New conversation"),
    title,
    h("details", null, h("summary", null, "Settings (JSON, optional)"), settings),
    h("button", { type: "submit" }, "Start"),
    formStatus,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    replace(formStatus);
    /** @type {Record<string, unknown>} */
    const body = {};
    const t = /** @type {HTMLInputElement} */ (title).value.trim();
    if (t) body.title = t;
    const s = /** @type {HTMLTextAreaElement} */ (settings).value.trim();
    try {
      if (s) body.settings = JSON.parse(s);
    } catch {
      replace(formStatus, errorLine("settings: not valid JSON"));
      return;
    }
    try {
      const conv = await api("POST", "/v1/conversations", body);
      location.hash = `#/c/${conv.id}`;
    } catch (err) {
      replace(formStatus, errorLine(err));
    }
  });

  replace(root, h("div", { class: "home" }, form, importPanel(), h("section", { class: "panel" }, h("h2", null, "Conversations"), exportAllButton(), list, more)));

  /** @param {string | undefined} cursor */
  async function load(cursor) {
    try {
      const page = await api("GET", `/v1/conversations?limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      if (!cursor && !page.conversations.length) list.append(h("li", { class: "muted" }, "No conversations yet."));
      for (const c of page.conversations) {
        list.append(
          h(
            "li",
            null,
            h("a", { href: `#/c/${c.id}` }, c.title || c.id),
            " ",
            h("span", { class: "muted" }, [c.messageCount !== undefined ? `${num(c.messageCount)} messages · ` : "", time(c.updatedAt ?? c.createdAt)]),
            " ",
            h("a", { class: "muted", href: `#/c/${c.id}/history` }, "history"),
          ),
        );
      }
      more.hidden = !page.next;
      more.onclick = () => load(page.next);
    } catch (err) {
      list.append(errorLine(err));
    }
  }
  await load(undefined);
}
