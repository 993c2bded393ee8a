// A new chat: the composer straight away (with the model to use), the conversation created on the
// first message; `#/?project=<id>` starts it in a project (named on the page, `projectId` on the
// create). #/manage keeps the full list with import and export.
import { ApiError, api, plainError, session } from "../api.js";
import { h, num, replace, time } from "../dom.js";
import { conversationsChanged } from "../prefs.js";
import { errorLine } from "../render.js";
import { projectGone } from "./projects.js";
import { modelSelect } from "./settings.js";
import { exportAllButton, importPanel } from "./transfer.js";

/** The new-chat composer's draft in sessionStorage, beside each chat's `draft:<id>`. */
const DRAFT_KEY = "draft:new";

/**
 * @param {HTMLElement} root @param {(id: string, first: string) => void} open
 * @param {{ projectId?: string, signal?: AbortSignal }} [opts] `projectId`: the chat is made in that
 *   project; `signal`: aborted once the person has gone on to another view (the project's name and
 *   the models are not drawn over it)
 */
export async function newChatView(root, open, { projectId, signal } = {}) {
  /** The new-chat draft, one for each project (what was typed there is that project's chat). */
  const draftKey = projectId ? `${DRAFT_KEY}:${projectId}` : DRAFT_KEY;
  const text = /** @type {HTMLTextAreaElement} */ (
    h("textarea", {
      id: "composer",
      rows: "1",
      placeholder: "Message",
      "aria-label": "Message",
      enterkeyhint: "send",
      dir: "auto",
    })
  );
  const status = h("div", { role: "status" });
  const models = h("span", { class: "model-pick" });
  // Its name once the project is read; a project deleted meanwhile says so (the create would be refused).
  const inProject = projectId
    ? h("div", { class: "in-project", id: "new-chat-project" }, h("span", { class: "muted" }, "In a project…"))
    : null;
  const form = h(
    "form",
    { class: "composer new", id: "new-chat-form" },
    h("div", { class: "composer-row" }, text, h("button", { type: "submit", id: "send", class: "primary" }, "Send")),
    h("div", { class: "composer-tools" }, models),
    status,
  );
  const view = h(
    "div",
    { class: "chat new-chat-view" },
    h(
      "div",
      { class: "hero" },
      inProject
        ? h("div", null, h("h1", null, "What can I help with?"), inProject)
        : h("h1", null, "What can I help with?"),
    ),
    form,
  );
  replace(root, view);
  document.title = "New chat · context-chat";
  // Files go up into a conversation, which does not exist before the first message: a file dropped
  // here is not taken (nor opened in the tab, leaving the page), and the page says when it can be.
  view.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
  });
  view.addEventListener("drop", (e) => {
    if (!e.dataTransfer?.types.includes("Files")) return;
    e.preventDefault();
    replace(
      status,
      h("span", { class: "muted" }, "Files can be attached once the chat has started: send a message first."),
    );
  });
  // The composer works from the moment it shows: its handlers are attached before the model list
  // loads, and a message sent before then starts on the default model.
  /** @type {HTMLElement | null} */
  let select = null;
  /** The model the project's settings name (its chats start on it), once the project is read. @type {string | null} */
  let projectModel = null;

  let busy = false;
  async function start() {
    const content = text.value;
    if (!content.trim() || busy) return;
    busy = true;
    // Kept until the conversation exists: a refused key swaps this view for the sign-in form, and
    // the message waits for the new-chat view that follows it (as a chat keeps its `draft:<id>`).
    sessionStorage.setItem(draftKey, content);
    try {
      const model = /** @type {HTMLSelectElement | null} */ (select)?.value;
      // In a project that names a model, the pick goes only when it is another: the project's
      // settings (that model's included) are what its new chats start with.
      const picked = model && model !== projectModel ? { settings: { model } } : {};
      const conv = await api("POST", "/v1/conversations", projectId ? { projectId, ...picked } : picked);
      // The chat it opens sends the message (and keeps it, under its own draft, if that fails).
      sessionStorage.removeItem(draftKey);
      conversationsChanged();
      open(conv.id, content);
    } catch (err) {
      // Still signed in, the view (and the message in it) stays: no draft is needed.
      if (session.key) sessionStorage.removeItem(draftKey);
      // A project deleted since the page opened (in another tab) is said plainly, not as the API's field.
      replace(status, (projectId && projectGone(err)) || errorLine(plainError(err).text));
      busy = false;
    }
  }
  form.addEventListener("submit", (e) => (e.preventDefault(), start()));
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) e.preventDefault(), start();
  });
  const grow = () => {
    text.style.height = "auto";
    text.style.height = `${Math.min(text.scrollHeight, 240)}px`;
  };
  text.addEventListener("input", grow);
  // A message whose sending left this view before its conversation existed (the key was refused:
  // the sign-in form took the page) is back, once.
  const draft = sessionStorage.getItem(draftKey);
  sessionStorage.removeItem(draftKey);
  if (draft?.trim()) {
    text.value = draft;
    grow();
  }
  text.focus();
  if (projectId && inProject) {
    try {
      const project = await api("GET", `/v1/projects/${encodeURIComponent(projectId)}`);
      if (signal?.aborted) return;
      projectModel = project.settings?.model ?? null;
      document.title = `New chat · ${project.name} · context-chat`;
      replace(
        inProject,
        "In the project ",
        h("a", { href: `#/projects/${encodeURIComponent(projectId)}`, dir: "auto" }, project.name),
        h("span", { class: "muted" }, ` · ${project.files.length === 1 ? "1 file" : `${project.files.length} files`}`),
      );
    } catch (err) {
      if (signal?.aborted) return;
      replace(
        inProject,
        errorLine(
          err instanceof ApiError && err.type === "not_found"
            ? "This project no longer exists: the chat can't be started in it."
            : plainError(err).text,
        ),
      );
    }
  }
  try {
    const picker = await modelSelect(projectModel);
    if (signal?.aborted) return;
    select = picker;
    replace(models, h("label", { for: "new-model" }, "Model "), select);
  } catch {
    // Without the list the chat still starts, on the default model: the page says so.
    replace(models, h("span", { class: "muted" }, "The models could not be loaded: the default model will be used."));
  }
}

/** Every conversation (newest first, paged), import and export. @param {HTMLElement} root */
export async function manageView(root) {
  const list = h("ul", { class: "conversations", id: "conversations" });
  const more = h("button", { type: "button", class: "secondary", hidden: true }, "Load more");
  replace(
    root,
    h(
      "div",
      { class: "home" },
      h("h1", null, "All chats"),
      importPanel(),
      h("section", { class: "panel" }, h("h2", null, "Conversations"), exportAllButton(), list, more),
    ),
  );
  document.title = "All chats · context-chat";
  /** @param {string | undefined} cursor */
  async function load(cursor) {
    try {
      const page = await api(
        "GET",
        `/v1/conversations?limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      if (!cursor && !page.data.length) list.append(h("li", { class: "muted" }, "No conversations yet."));
      for (const c of page.data)
        list.append(
          h(
            "li",
            null,
            h("a", { href: `#/c/${c.id}` }, c.title || "New chat"),
            " ",
            h("span", { class: "muted" }, [
              c.messageCount !== undefined ? `${num(c.messageCount)} messages · ` : "",
              time(c.updatedAt ?? c.createdAt),
            ]),
            " ",
            h("a", { class: "muted", href: `#/c/${c.id}/history` }, "history"),
          ),
        );
      more.hidden = !page.next;
      more.onclick = () => load(page.next);
    } catch (err) {
      list.append(errorLine(plainError(err).text));
    }
  }
  await load(undefined);
}
