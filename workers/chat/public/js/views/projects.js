// Projects (#/projects, #/projects/<id>): files shared by every conversation started in a project
// (each one's prompt lists them; the model reads them through its tools). The list (newest first,
// paged by `next`), a create form and a rename in place; a project's page with its files and their
// notes, an upload (one request per file, with progress and ✕), a file's delete after a confirm,
// its settings as a form, its delete after a confirm (back to the list, which says so), and "New
// chat in this project" (#/?project=<id>, home.js).
import { ApiError, api, MAX_UPLOAD_BYTES, plainError, readable, uploadProjectFile } from "../api.js";
import { bytes, h, replace } from "../dom.js";
import { errorLine } from "../render.js";
import { clearInvalid, confirmGroup, field, firstEmpty, inFormWords, oneAtATime, pagedList, when } from "./fields.js";
import { ADVANCED, models } from "./settings.js";

const PAGE = 50;
/** MAX_UPLOAD_BYTES as people read it. */
const MAX_UPLOAD_SAID = "1 GB";
const NAME_HINT = "Up to 200 characters. Its conversations are told the project's current name.";

/** What went wrong; a 404 here is the project (deleted elsewhere) or its file, not a conversation. @param {unknown} err */
const said = (err) =>
  err instanceof ApiError && err.type === "not_found"
    ? /\bfile\b/.test(err.message)
      ? "This file no longer exists (it was deleted elsewhere)."
      : "This project no longer exists (it was deleted elsewhere)."
    : plainError(err).text;

/** @param {string} id */
const at = (id) => `/v1/projects/${encodeURIComponent(id)}`;

/** What the list says once, after a project's page deleted its project and went back to it. @type {string | null} */
let deletedNote = null;

/**
 * A new chat (#/?project=<id>, home.js) refused because its project was deleted meanwhile, in
 * another tab say (the API's 400 names `projectId`): said in plain words with the way back to the
 * projects; null for any other failure.
 * @param {unknown} err
 */
export function projectGone(err) {
  if (!(err instanceof ApiError && err.type === "invalid_request" && /^projectId: no such project\b/.test(err.message)))
    return null;
  return h(
    "div",
    { class: "error-line", role: "alert" },
    "This project no longer exists. ",
    h("a", { href: "#/projects" }, "All projects"),
  );
}

/**
 * The projects: a create form, then the list.
 * @param {HTMLElement} root
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function projectsView(root, signal) {
  document.title = "Projects · context-chat";
  const note = deletedNote;
  deletedNote = null;
  const list = h("ul", { class: "items", id: "projects" });
  const empty = h("p", { class: "muted", id: "projects-empty", hidden: true }, "No projects yet.");
  const listStatus = h("div", { role: "status", id: "projects-status" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "secondary", id: "projects-more", hidden: true }, "Load more")
  );
  const form = createForm((p) => {
    list.prepend(projectItem(p));
    empty.hidden = true;
  });
  replace(
    root,
    h(
      "div",
      { class: "home manage-view" },
      h("h1", null, "Projects"),
      h(
        "p",
        { class: "muted" },
        "Files shared by every conversation started in a project: each one's prompt lists them, and the model reads them through its tools.",
      ),
      form,
      h(
        "section",
        { class: "panel", "aria-labelledby": "projects-heading" },
        h("h2", { id: "projects-heading" }, "Your projects"),
        listStatus,
        empty,
        list,
        more,
      ),
    ),
  );

  await pagedList({
    path: "/v1/projects",
    limit: PAGE,
    list,
    more,
    status: listStatus,
    empty,
    item: projectItem,
    said,
    // Load more gone with the last page: the focus goes to the first project it brought.
    focusFirst: (first) => /** @type {HTMLElement | null} */ (first?.querySelector("a.item-name") ?? null)?.focus(),
    signal,
  });
  // Said once the list is there (without the project), in a live region already on the page.
  if (note && !signal?.aborted) listStatus.prepend(listStatus.textContent ? `${note} ` : note);
}

/** The create form. @param {(p: any) => void} created */
function createForm(created) {
  const name = h("input", { id: "project-name", name: "name", maxlength: "200", autocomplete: "off", dir: "auto" });
  const status = h("div", { role: "status", id: "project-form-status" });
  const submit = h("button", { type: "submit", class: "primary", id: "project-create" }, "Create");
  /** @type {import("./fields.js").Labelled} */
  const fields = new Map([["name", { label: "Name", input: name }]]);
  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "panel settings-form", id: "project-form", "aria-labelledby": "project-form-heading" },
      h("h2", { id: "project-form-heading" }, "New project"),
      field("Name", name, NAME_HINT),
      h("div", { class: "form-actions" }, submit),
      status,
    )
  );
  const send = oneAtATime(submit, async () => {
    clearInvalid(fields);
    const missing = firstEmpty(fields, ["name"]);
    if (missing) return void replace(status, errorLine(`Fill in “${missing}”: nothing was created.`));
    replace(status, h("span", { class: "muted" }, "Creating…"));
    try {
      const p = await api("POST", "/v1/projects", { name: /** @type {HTMLInputElement} */ (name).value.trim() });
      created(p);
      form.reset();
      replace(
        status,
        "Created “",
        h("a", { href: `#/projects/${encodeURIComponent(p.id)}`, dir: "auto" }, p.name),
        "”: open it to add files.",
      );
    } catch (err) {
      replace(status, errorLine(inFormWords(said(err), fields)));
    }
  });
  form.addEventListener("submit", (e) => (e.preventDefault(), send()));
  return form;
}

/**
 * The rename form in place of `shown`: Save sends the new name (PATCH), a refusal named on its
 * field; Cancel, Escape or a Save puts `shown` back with the focus on `rename`.
 * @param {{ project: any, shown: HTMLElement[], rename: HTMLElement, status: HTMLElement, renamed: (p: any) => void }} opts
 */
function renameInPlace({ project, shown, rename, status, renamed }) {
  const name = /** @type {HTMLInputElement} */ (
    h("input", { id: `rename-${project.id}`, maxlength: "200", autocomplete: "off", dir: "auto", value: project.name })
  );
  /** @type {import("./fields.js").Labelled} */
  const fields = new Map([["name", { label: "Name", input: name }]]);
  const done = () => {
    editor.replaceWith(...shown);
    rename.focus();
  };
  const save = h("button", { type: "submit", class: "small primary" }, "Save");
  const editor = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "settings-form item-edit project-rename", "aria-label": `Rename ${project.name}` },
      field("Name", name),
      h(
        "div",
        { class: "form-actions" },
        h("button", { type: "button", class: "small ghost", onclick: done }, "Cancel"),
        save,
      ),
    )
  );
  editor.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      done();
    }
  });
  const send = oneAtATime(save, async () => {
    clearInvalid(fields);
    const missing = firstEmpty(fields, ["name"]);
    if (missing) return void replace(status, errorLine(`Fill in “${missing}”: nothing was saved.`));
    if (name.value.trim() === project.name) {
      done();
      return void replace(status, "Nothing changed.");
    }
    try {
      const p = await api("PATCH", at(project.id), { name: name.value.trim() });
      renamed(p);
      done();
      replace(status, "Renamed: its conversations are told the new name from their next turn.");
    } catch (err) {
      replace(status, errorLine(inFormWords(said(err), fields)));
    }
  });
  editor.addEventListener("submit", (e) => (e.preventDefault(), send()));
  replace(status);
  shown[0].replaceWith(editor);
  for (const el of shown.slice(1)) el.remove();
  name.focus();
  name.select();
}

/** One project in the list: its name (a link to its page), when it was made, and Rename. @param {any} initial */
function projectItem(initial) {
  let p = initial;
  const li = h("li", { class: "item project", "data-id": p.id });
  const info = h("div", { class: "item-info" });
  const status = h("div", { class: "item-status", role: "status" });
  const rename = h("button", { type: "button", class: "small secondary project-rename-button" }, "Rename");
  const actions = h("div", { class: "item-actions" }, rename);
  const draw = () => {
    replace(
      info,
      h(
        "div",
        { class: "item-head" },
        h("a", { class: "item-name", href: `#/projects/${encodeURIComponent(p.id)}`, dir: "auto" }, p.name),
      ),
      h("p", { class: "item-meta" }, "created ", when(p.createdAt)),
    );
    rename.setAttribute("aria-label", `Rename ${p.name}`);
  };
  draw();
  replace(li, info, actions, status);
  rename.addEventListener("click", () =>
    renameInPlace({
      project: p,
      shown: [info, actions],
      rename,
      status,
      renamed: (changed) => {
        p = changed;
        draw();
      },
    }),
  );
  return li;
}

/**
 * A project's page: its name (Rename, Delete), "New chat in this project", its settings as a form,
 * its files with their notes, an upload and each file's delete.
 * @param {HTMLElement} root @param {string} id
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function projectView(root, id, signal) {
  document.title = "Project · context-chat";
  replace(root, h("p", { class: "muted" }, "Loading…"));
  /** @type {any} */
  let p;
  /** @type {any[]} */
  let all;
  try {
    // Without the models (a failed read, asked again on the next page) the form offers what it can.
    [p, all] = await Promise.all([api("GET", at(id)), models().catch(() => [])]);
  } catch (err) {
    if (!signal?.aborted)
      replace(
        root,
        h("div", { class: "home manage-view" }, errorLine(said(err)), h("a", { href: "#/projects" }, "All projects")),
      );
    return;
  }
  if (signal?.aborted) return;
  const heading = h("h1", { id: "project-heading", dir: "auto" });
  const status = h("div", { role: "status", id: "project-status" });
  const rename = h("button", { type: "button", class: "small secondary", id: "project-rename" }, "Rename");
  const del = h("button", { type: "button", class: "small ghost", id: "project-delete" }, "Delete");
  const head = h("div", { class: "item-head project-head" }, heading, rename, del);
  const draw = () => {
    replace(heading, p.name);
    rename.setAttribute("aria-label", `Rename ${p.name}`);
    del.setAttribute("aria-label", `Delete ${p.name}`);
    // A rename answered after the person moved on (or signed out) names no other view's tab.
    if (!signal?.aborted) document.title = `${p.name} · context-chat`;
  };
  draw();
  rename.addEventListener("click", () =>
    renameInPlace({
      project: p,
      shown: [head],
      rename,
      status,
      renamed: (changed) => {
        p = { ...p, ...changed };
        draw();
      },
    }),
  );
  del.addEventListener("click", () =>
    confirmProjectDelete({
      project: p,
      del,
      status,
      // Back to the list, which says so; not when the person has already gone on to another view.
      deleted: (said) => {
        if (signal?.aborted) return;
        deletedNote = said;
        location.hash = "#/projects";
      },
    }),
  );
  const files = filesPanel(id, p);
  replace(
    root,
    h(
      "div",
      { class: "home manage-view project-view" },
      h("p", { class: "crumbs" }, h("a", { href: "#/projects" }, "All projects")),
      head,
      status,
      h(
        "p",
        { class: "form-actions project-actions" },
        h(
          "a",
          { class: "button", id: "project-new-chat", href: `#/?project=${encodeURIComponent(id)}` },
          "New chat in this project",
        ),
      ),
      files.panel,
      settingsPanel({ id, project: p, all }),
    ),
  );
  if (p.filesNext) await moreFiles(id, { files, cursor: p.filesNext, signal });
}

/** What every select offers first: the setting left out of the project, so the account's applies. */
const ACCOUNTS = "";
/** The effort select's value for `effort: null` (the model's own default), which "" already names. */
const MODEL_DEFAULT = "default";
const THINKING = ["adaptive", "enabled", "between_tools", "disabled"];
const EFFORT = ["low", "medium", "high", "xhigh", "max"];
/** Settings the form has no field for, by their name in words for a refusal that names them. */
const API_ONLY = new Map([
  ["serverTools", "Server tools"],
  ["refusalFallbackModel", "Refusal fallback model"],
]);

/** @param {string} value @param {string} label @param {string} chosen */
const option = (value, label, chosen) => h("option", { value, selected: value === chosen }, label);

/**
 * The project's settings as a form (the patch its new conversations start with, over the account's):
 * each field left on "The account's" (a number left empty) is not the project's. A Save replaces the
 * project's settings (PATCH settings) with the form's, the keys it has no field for kept as they
 * are, and draws the form again from the answer; a refusal names each field by its label, marked
 * invalid, with the focus on the first, as the conversation's Settings does.
 * @param {{ id: string, project: any, all: any[] }} opts `all`: the models (none when they did not load)
 */
function settingsPanel({ id, project, all }) {
  /** @type {Record<string, any>} */
  let s = { ...(project.settings ?? {}) };
  const select = (/** @type {string} */ key) =>
    /** @type {HTMLSelectElement} */ (h("select", { id: `project-set-${key}`, name: key }));
  const model = select("model");
  const thinking = select("thinking");
  const display = select("thinkingDisplay");
  const effort = select("effort");
  const budget = /** @type {HTMLInputElement} */ (
    h("input", {
      id: "project-set-thinkingBudgetTokens",
      name: "thinkingBudgetTokens",
      type: "number",
      step: "any",
      placeholder: "The account's",
    })
  );
  const budgetRow = field("Thinking budget (tokens)", budget);
  const numbers = ADVANCED.map(([key, label]) => {
    const input = /** @type {HTMLInputElement} */ (
      h("input", { id: `project-set-${key}`, name: key, type: "number", step: "any", placeholder: "The account's" })
    );
    return { key, label, input, row: field(label, input) };
  });
  const advanced = /** @type {HTMLDetailsElement} */ (
    h(
      "details",
      { class: "advanced" },
      h("summary", null, "Advanced: context management"),
      numbers.map((n) => n.row),
    )
  );
  const others = h("div", { class: "project-settings-others" });
  const status = h("div", { role: "status", id: "project-settings-status" });
  const save = h("button", { type: "submit", class: "primary", id: "project-settings-save" }, "Save");
  // Manual thinking's budget goes with thinking "enabled" only, as on the conversation's Settings.
  const showBudget = () => {
    budgetRow.hidden = thinking.value !== "enabled";
    budget.disabled = budgetRow.hidden;
  };
  /**
   * The thinking modes and effort levels of the model picked (every one on the account's model,
   * which this page does not know), with `keepThinking` and `keepEffort` chosen where offered.
   * @param {string} keepThinking @param {string} keepEffort
   */
  const fill = (keepThinking, keepEffort) => {
    const m = all.find((x) => x.id === model.value);
    const modes = m ? (m.thinking?.modes ?? []).filter((/** @type {string} */ x) => x !== "auto") : THINKING;
    const levels = m ? (m.effort?.levels ?? []) : EFFORT;
    // A stored value the list leaves out stays offered: the form shows what the project holds.
    const withStored = (/** @type {string[]} */ list, /** @type {unknown} */ stored) =>
      typeof stored === "string" && stored && !list.includes(stored) ? [...list, stored] : list;
    replace(
      thinking,
      option(ACCOUNTS, "The account's", keepThinking),
      option("auto", "Model default", keepThinking),
      withStored(modes, s.thinking === "auto" ? undefined : s.thinking).map((x) =>
        option(x, x.replace("_", " "), keepThinking),
      ),
    );
    replace(
      effort,
      option(ACCOUNTS, "The account's", keepEffort),
      option(MODEL_DEFAULT, "Model default", keepEffort),
      withStored(levels, s.effort).map((x) => option(x, x, keepEffort)),
    );
    showBudget();
  };
  // The form shows the settings as the server holds them: at first, and again after each Save.
  const draw = () => {
    const listed = all.some((m) => m.id === s.model);
    replace(
      model,
      option(ACCOUNTS, "The account's", s.model ?? ACCOUNTS),
      s.model && !listed ? option(s.model, `${s.model} (current)`, s.model) : null,
      all.map((m) => option(m.id, `${m.name ?? m.id}${m.status === "active" ? "" : ` (${m.status})`}`, s.model)),
    );
    fill(s.thinking ?? ACCOUNTS, s.effort === undefined ? ACCOUNTS : (s.effort ?? MODEL_DEFAULT));
    replace(
      display,
      option(ACCOUNTS, "The account's", s.thinkingDisplay ?? ACCOUNTS),
      option("summarized", "Show a summary", s.thinkingDisplay ?? ACCOUNTS),
      option("omitted", "Hide it", s.thinkingDisplay ?? ACCOUNTS),
    );
    budget.value = String(s.thinkingBudgetTokens ?? "");
    for (const n of numbers) n.input.value = String(s[n.key] ?? "");
    const rest = Object.keys(s).filter((k) => !labelled.get(k)?.input);
    replace(
      others,
      rest.length
        ? [
            h("p", { class: "muted" }, "Also its own, set through the API (a Save keeps them):"),
            h(
              "dl",
              { class: "project-settings" },
              rest.map((k) => [
                h("dt", null, h("code", null, k)),
                h("dd", null, h("code", null, JSON.stringify(s[k]))),
              ]),
            ),
          ]
        : null,
    );
  };
  model.addEventListener("change", () => fill(thinking.value, effort.value));
  thinking.addEventListener("change", showBudget);
  /**
   * Each setting a refusal may name (`settings.<key>`) with the label it is shown under; those the
   * form has no field for by their name in words, with no field to focus.
   * @type {Map<string, { label: string, input?: HTMLElement }>}
   */
  const labelled = new Map([
    ...[...API_ONLY].map(([key, label]) => /** @type {[string, { label: string }]} */ ([key, { label }])),
    ["model", { label: "Model", input: model }],
    ["thinking", { label: "Thinking", input: thinking }],
    ["thinkingBudgetTokens", { label: "Thinking budget (tokens)", input: budget }],
    ["thinkingDisplay", { label: "Thinking shown", input: display }],
    ["effort", { label: "Effort", input: effort }],
    ...numbers.map((n) => /** @type {[string, { label: string, input: HTMLElement }]} */ ([n.key, n])),
  ]);
  /** A refusal in the form's words, each field it names marked, the focus on the first ("Advanced" opened for it). @param {string} text */
  const refusal = (text) => {
    /** @type {HTMLElement | null} */
    let first = null;
    const said = text.replace(/\bsettings\.(\w+)/g, (whole, /** @type {string} */ key) => {
      const f = labelled.get(key);
      if (!f) return whole;
      f.input?.setAttribute("aria-invalid", "true");
      first ??= f.input ?? null;
      return `"${f.label}"`;
    });
    if (first) {
      if (advanced.contains(first)) advanced.open = true;
      /** @type {HTMLElement} */ (first).focus();
    }
    return said;
  };
  /** The project's settings with the form's in them, or the label of a number the browser cannot read. */
  const wanted = () => {
    // Empty is the account's, and so is a number the browser cannot read (its value is "" too): named instead.
    const unread = [...numbers, { key: "thinkingBudgetTokens", label: "Thinking budget (tokens)", input: budget }].find(
      (n) => !n.input.disabled && n.input.validity.badInput,
    );
    if (unread) return { unread };
    const number = (/** @type {HTMLInputElement} */ input) => (input.value === "" ? undefined : Number(input.value));
    /** @type {Record<string, unknown>} undefined: left to the account */
    const next = {
      ...s,
      model: model.value || undefined,
      thinking: thinking.value || undefined,
      thinkingDisplay: display.value || undefined,
      effort: effort.value === MODEL_DEFAULT ? null : effort.value || undefined,
      ...Object.fromEntries(numbers.map((n) => [n.key, number(n.input)])),
      // Hidden (thinking is not "enabled"), the budget stays as the project holds it.
      // Empty keeps a null the API set (the default budget) rather than leaving it to the account.
      ...(budget.disabled
        ? {}
        : { thinkingBudgetTokens: budget.value === "" && s.thinkingBudgetTokens === null ? null : number(budget) }),
    };
    return { next: Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined)) };
  };
  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "panel settings-form", id: "project-settings-form", "aria-labelledby": "project-settings-heading" },
      h("h2", { id: "project-settings-heading" }, "Settings"),
      h(
        "p",
        { class: "muted", id: "project-settings-hint" },
        "Its new conversations start with these, over the account's; what is left on “The account's” (a number left empty) is the account's. Conversations already made keep theirs.",
      ),
      field("Model", model),
      field("Thinking", thinking),
      budgetRow,
      field("Thinking shown", display),
      field("Effort", effort),
      advanced,
      others,
      h("div", { class: "form-actions" }, save),
      status,
    )
  );
  draw();
  const send = oneAtATime(save, async () => {
    for (const f of labelled.values()) f.input?.removeAttribute("aria-invalid");
    const { next, unread } = wanted();
    if (unread) {
      unread.input.setAttribute("aria-invalid", "true");
      if (advanced.contains(unread.input)) advanced.open = true;
      unread.input.focus();
      return void replace(status, errorLine(`“${unread.label}” needs a number, or nothing: nothing was saved.`));
    }
    if (sameSettings(next, s)) return void replace(status, "Nothing changed.");
    replace(status, h("span", { class: "muted" }, "Saving…"));
    try {
      const p = await api("PATCH", at(id), { settings: next });
      s = { ...(p.settings ?? {}) };
      draw();
      replace(status, "Saved: the project's new conversations start with these.");
    } catch (err) {
      replace(status, errorLine(refusal(said(err))));
    }
  });
  form.addEventListener("submit", (e) => (e.preventDefault(), send()));
  return form;
}

/** Whether two settings patches hold the same keys and values. @param {Record<string, any>} a @param {Record<string, any>} b */
const sameSettings = (a, b) => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
};

/**
 * Delete after an inline confirm in place of `del` (Keep or Escape puts it back with the focus on
 * it): the project and its files go (DELETE), its conversations stay, without them; `deleted` gets
 * what to say. A project already deleted elsewhere (a 404) is gone all the same.
 * @param {{ project: any, del: HTMLElement, status: HTMLElement, deleted: (said: string) => void }} opts
 */
function confirmProjectDelete({ project, del, status, deleted }) {
  const keep = () => {
    confirm.replaceWith(del);
    del.focus();
  };
  const yes = h(
    "button",
    { type: "button", class: "small danger confirm-delete", id: "project-delete-confirm" },
    "Delete",
  );
  const confirm = confirmGroup({
    label: "Confirm delete",
    question: "Delete this project and all its files? Its conversations stay, without the project's files. ",
    yes,
    keep,
  });
  yes.addEventListener(
    "click",
    oneAtATime(yes, async () => {
      try {
        await api("DELETE", at(project.id));
        deleted(`Deleted “${project.name}” and its files: its conversations stay, without them.`);
      } catch (err) {
        if (err instanceof ApiError && err.type === "not_found")
          return deleted(`“${project.name}” was already deleted elsewhere.`);
        keep();
        replace(status, errorLine(said(err)));
      }
    }),
  );
  replace(status);
  del.replaceWith(confirm);
  yes.focus();
}

/** @typedef {{ panel: HTMLElement, list: HTMLElement, itemOf: (f: any) => HTMLElement }} Files */

/**
 * The files: each with its type, size and note, and Delete; the upload above them.
 * @param {string} id @param {any} project
 * @returns {Files}
 */
function filesPanel(id, project) {
  const list = h("ul", { class: "items", id: "project-files" });
  const empty = h("p", { class: "muted", id: "project-files-empty", hidden: true }, "No files yet.");
  const heading = h("h2", { id: "project-files-heading" }, "Files");
  const listStatus = h("div", { role: "status", id: "project-files-status" });
  const uploads = h("ul", { class: "uploads", id: "project-uploads", "aria-label": "Uploading files" });
  const picker = /** @type {HTMLInputElement} */ (
    h("input", { type: "file", id: "project-file", multiple: true, class: "file-picker" })
  );
  /** After a delete, the focus goes to the next file's Delete, or the list's heading. @param {Element | null} next */
  const focusAfter = (next) => {
    const target = /** @type {HTMLElement | null} */ (next?.querySelector(".file-delete") ?? null);
    if (target) return target.focus();
    heading.setAttribute("tabindex", "-1");
    heading.focus();
  };
  /** @param {any} f */
  const itemOf = (f) =>
    fileItem(id, f, (li) => {
      const next = li.nextElementSibling ?? li.previousElementSibling;
      li.remove();
      empty.hidden = list.children.length > 0;
      replace(listStatus, `Deleted “${f.name}”: its conversations no longer list it.`);
      focusAfter(next);
    });
  for (const f of project.files ?? []) list.append(itemOf(f));
  empty.hidden = list.children.length > 0;
  picker.addEventListener("change", () => {
    for (const file of Array.from(picker.files ?? []))
      upload(id, file, {
        uploads,
        done: (f) => {
          list.append(itemOf(f));
          empty.hidden = true;
          replace(listStatus, `Uploaded “${f.name}”: its conversations list it from their next turn.`);
        },
      });
    picker.value = "";
  });
  const panel = h(
    "section",
    { class: "panel", "aria-labelledby": "project-files-heading" },
    heading,
    h(
      "div",
      { class: "field" },
      h("label", { for: "project-file" }, "Add files"),
      picker,
      h(
        "span",
        { class: "field-hint", id: "project-file-hint" },
        `PDF, text, code, CSV, XLSX, DOCX or images, up to ${MAX_UPLOAD_SAID} each; a project holds up to 200 files.`,
      ),
    ),
    uploads,
    listStatus,
    empty,
    list,
  );
  picker.setAttribute("aria-describedby", "project-file-hint");
  return { panel, list, itemOf };
}

/**
 * The rest of the project's files, after the first page its GET brought.
 * @param {string} id
 * @param {{ files: Files, cursor: string, signal?: AbortSignal }} opts
 */
async function moreFiles(id, { files, cursor, signal }) {
  let next = cursor;
  try {
    while (next) {
      const page = await api("GET", `${at(id)}/files?limit=200&cursor=${encodeURIComponent(next)}`);
      if (signal?.aborted) return;
      for (const f of page.data) files.list.append(files.itemOf(f));
      next = page.next;
    }
  } catch (err) {
    if (!signal?.aborted) files.panel.append(errorLine(said(err)));
  }
}

/**
 * One file going up (in parts when it is large, as the chat's are: js/api.js uploadProjectFile): a
 * row with its progress and ✕ (cancels it), gone once it is up; a file the server cannot read, or
 * over MAX_UPLOAD_BYTES, is refused before it is sent.
 * @param {string} id @param {File} file
 * @param {{ uploads: HTMLElement, done: (f: any) => void }} opts
 */
function upload(id, file, { uploads, done }) {
  const row = h("li", { class: "upload file-chip" }, h("span", { class: "file-name" }, file.name));
  const remove = h("button", { type: "button", class: "ghost remove", "aria-label": `Cancel ${file.name}` }, "✕");
  uploads.append(row);
  /** @param {string} why */
  const failed = (why) => {
    row.querySelector("progress")?.remove();
    row.classList.add("failed");
    row.append(h("span", { class: "upload-error", role: "alert" }, why));
    remove.setAttribute("aria-label", `Dismiss ${file.name}`);
    row.append(remove);
    remove.onclick = () => row.remove();
  };
  if (!readable(file)) return failed("can't be read here: use PDF, text, code, CSV, XLSX, DOCX or an image.");
  if (file.size > MAX_UPLOAD_BYTES) return failed(`is too large (${bytes(file.size)}; at most ${MAX_UPLOAD_SAID}).`);
  const bar = /** @type {HTMLProgressElement} */ (
    h("progress", { max: "1", value: "0", "aria-label": `Uploading ${file.name}` })
  );
  const sending = uploadProjectFile(id, file, (sent, total) => ((bar.max = total || 1), (bar.value = sent)));
  remove.onclick = () => sending.abort();
  row.append(bar, remove);
  sending.done.then(
    (f) => {
      row.remove();
      done(f);
    },
    (err) => {
      if (err instanceof ApiError && err.type === "aborted") return void row.remove();
      failed(said(err));
    },
  );
}

/**
 * One file of the project: name, type, size, when it was added, its note, and Delete after a confirm.
 * @param {string} projectId @param {any} f @param {(li: HTMLElement) => void} deleted
 */
function fileItem(projectId, f, deleted) {
  const li = h("li", { class: "item project-file", "data-id": f.id });
  const status = h("div", { class: "item-status", role: "status" });
  const del = h(
    "button",
    { type: "button", class: "small ghost file-delete", "aria-label": `Delete ${f.name}` },
    "Delete",
  );
  const actions = h("div", { class: "item-actions" }, del);
  replace(
    li,
    h(
      "div",
      { class: "item-head" },
      h("h3", { class: "item-name", dir: "auto" }, f.name),
      h("span", { class: "muted" }, `${f.type} · ${bytes(f.size ?? 0)}`),
    ),
    f.createdAt ? h("p", { class: "item-meta" }, "added ", when(f.createdAt)) : null,
    f.note
      ? h(
          "details",
          { class: "file-note" },
          h("summary", null, "Note"),
          h("pre", { class: "note-text", dir: "auto", tabindex: "0" }, f.note),
        )
      : null,
    actions,
    status,
  );
  del.addEventListener("click", () => {
    // Keep (or Escape) puts the actions back with the focus on Delete, where it was.
    const keep = () => {
      confirm.replaceWith(actions);
      del.focus();
    };
    const yes = h("button", { type: "button", class: "small danger confirm-delete" }, "Delete");
    const confirm = confirmGroup({
      label: "Confirm delete",
      question: "Delete this file? Its conversations no longer list it. ",
      yes,
      keep,
    });
    yes.addEventListener(
      "click",
      oneAtATime(yes, async () => {
        try {
          await api("DELETE", `${at(projectId)}/files/${encodeURIComponent(f.id)}`);
          deleted(li);
        } catch (err) {
          keep();
          replace(status, errorLine(said(err)));
        }
      }),
    );
    actions.replaceWith(confirm);
    yes.focus();
  });
  return li;
}
