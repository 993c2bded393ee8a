// Projects (#/projects, #/projects/<id>): files shared by every conversation started in a project
// (each one's prompt lists them; the model reads them through its tools). The list (newest first,
// paged by `next`), a create form and a rename in place; a project's page with its files and their
// notes, an upload (one request per file, with progress and ✕), a file's delete after a confirm,
// its settings shown read-only, and "New chat in this project" (#/?project=<id>, home.js).
import { ApiError, api, MAX_UPLOAD_BYTES, plainError, readable, uploadProjectFile } from "../api.js";
import { bytes, h, replace } from "../dom.js";
import { errorLine } from "../render.js";
import { clearInvalid, confirmGroup, field, firstEmpty, inFormWords, oneAtATime, pagedList, when } from "./fields.js";

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

/**
 * The projects: a create form, then the list.
 * @param {HTMLElement} root
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function projectsView(root, signal) {
  document.title = "Projects · context-chat";
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
 * A project's page: its name (Rename), "New chat in this project", its settings (read-only), its
 * files with their notes, an upload and each file's delete.
 * @param {HTMLElement} root @param {string} id
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function projectView(root, id, signal) {
  document.title = "Project · context-chat";
  replace(root, h("p", { class: "muted" }, "Loading…"));
  /** @type {any} */
  let p;
  try {
    p = await api("GET", at(id));
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
  const head = h("div", { class: "item-head project-head" }, heading, rename);
  const draw = () => {
    replace(heading, p.name);
    rename.setAttribute("aria-label", `Rename ${p.name}`);
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
      settingsPanel(p.settings ?? {}),
    ),
  );
  if (p.filesNext) await moreFiles(id, { files, cursor: p.filesNext, signal });
}

/**
 * The project's settings, read-only: the patch its new conversations start with over the tenant's.
 * @param {Record<string, unknown>} settings
 */
function settingsPanel(settings) {
  const keys = Object.keys(settings);
  return h(
    "section",
    { class: "panel", "aria-labelledby": "project-settings-heading" },
    h("h2", { id: "project-settings-heading" }, "Settings"),
    keys.length
      ? [
          h(
            "p",
            { class: "muted" },
            "Its new conversations start with these, over the account's (set through the API):",
          ),
          h(
            "dl",
            { class: "project-settings" },
            keys.map((k) => [
              h("dt", null, h("code", null, k)),
              h("dd", null, h("code", null, JSON.stringify(settings[k]))),
            ]),
          ),
        ]
      : h(
          "p",
          { class: "muted" },
          "None of its own: its conversations start with the account's settings (set through the API).",
        ),
  );
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
