// Import and export: a transcript file becomes a new conversation (streamed by the browser
// straight into POST /v1/conversations/import), a conversation downloads as JSON, JSONL or
// Markdown, and "Export all" runs the tenant-wide export job and downloads its file when done.
import { ApiError, api, plainError, received, send } from "../api.js";
import { h, replace } from "../dom.js";
import { conversationsChanged } from "../prefs.js";
import { errorLine } from "../render.js";

/**
 * A file the API answers with, through api.js's one request path (a refused key signs out, a drop
 * reads as one). @param {string} path @returns {Promise<Blob>}
 */
async function authorizedBlob(path) {
  const res = await send("GET", path);
  return received(res.blob());
}

/** Saves a blob under a file name (the key travels in a header, so a plain link cannot do this). @param {Blob} blob @param {string} name */
function save(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Half a surrogate pair: encodeURIComponent throws on one (URIError), so the import would never start. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * An imported file's title: its name less the extension and what a title may not hold (control and
 * format characters, line separators: the API's title rule refuses them). At most 200 UTF-16 units,
 * as the API counts a title's length, cut between characters; a lone surrogate in the name itself
 * (a file system may allow one) becomes U+FFFD.
 * @param {string} fileName @returns {string}
 */
export function importTitle(fileName) {
  const cleaned = fileName
    .replace(/\.(jsonl|ndjson|json)$/i, "")
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, "")
    .replace(LONE_SURROGATE, "\ufffd")
    .trim();
  // A pair the cut would split (an emoji whose first half is the 200th unit) is left out whole.
  const end = /[\ud800-\udbff]/.test(cleaned.charAt(199)) ? 199 : 200;
  const named = cleaned.slice(0, end).trim();
  return named || "Imported conversation";
}

/** The Import panel of the home view. */
export function importPanel() {
  const file = /** @type {HTMLInputElement} */ (
    h("input", {
      type: "file",
      id: "import-file",
      "aria-label": "Transcript file to import",
      accept: ".json,.jsonl,.ndjson,application/json",
    })
  );
  const status = h("div", { id: "import-status", role: "status" });
  const form = h(
    "form",
    { class: "panel", id: "import-form" },
    h("h2", null, "Import"),
    h("p", { class: "muted" }, "A transcript: Anthropic Messages JSON, or JSONL with one message per line."),
    file,
    h("button", { type: "submit", id: "import-button" }, "Import"),
    status,
  );
  const button = /** @type {HTMLButtonElement} */ (form.querySelector("#import-button"));
  /**
   * One import at a time: a second click (a double click) while the first runs would import the file
   * again. aria-disabled, not disabled: a disabled button would drop the focus to the top of the page.
   */
  let importing = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (importing) return;
    const chosen = file.files?.[0];
    if (!chosen) return void replace(status, errorLine("choose a file first"));
    importing = true;
    button.setAttribute("aria-disabled", "true");
    replace(status, h("span", { class: "muted" }, "Importing…"));
    const jsonl = /\.(jsonl|ndjson)$/i.test(chosen.name);
    const title = importTitle(chosen.name);
    try {
      const res = await send("POST", `/v1/conversations/import?title=${encodeURIComponent(title)}`, {
        body: chosen,
        type: jsonl ? "application/x-ndjson" : "application/json",
        accept: "application/json",
      });
      const body = await received(res.json());
      // The sidebar lists the new conversation.
      conversationsChanged();
      location.hash = `#/c/${body.id}/history`;
    } catch (err) {
      replace(status, errorLine(plainError(err).text));
    } finally {
      importing = false;
      button.removeAttribute("aria-disabled");
    }
  });
  return form;
}

/** Export buttons for one conversation. @param {string} id */
export function exportControls(id) {
  const format = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { id: "export-format", "aria-label": "Export format" },
      h("option", { value: "json" }, "JSON"),
      h("option", { value: "jsonl" }, "JSONL"),
      h("option", { value: "markdown" }, "Markdown"),
    )
  );
  const status = h("span");
  const button = h("button", { type: "button", class: "secondary", id: "export-button" }, "Export");
  button.addEventListener("click", async () => {
    replace(status);
    try {
      const ext = format.value === "markdown" ? "md" : format.value;
      save(
        await authorizedBlob(`/v1/conversations/${encodeURIComponent(id)}/export?format=${format.value}`),
        `${id}.${ext}`,
      );
    } catch (err) {
      replace(status, errorLine(plainError(err).text));
    }
  });
  return h("span", { class: "export-controls" }, format, button, status);
}

/** Runs the tenant-wide export job and downloads its file once done. */
export function exportAllButton() {
  const status = h("span", { id: "export-all-status", class: "muted", role: "status" });
  const button = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "secondary", id: "export-all" }, "Export all")
  );
  /**
   * One job at a time: a second press while one runs would start another. aria-disabled, not
   * disabled: a disabled button would drop the keyboard focus to the top of the page.
   */
  let exporting = false;
  button.addEventListener("click", async () => {
    if (exporting) return;
    exporting = true;
    button.setAttribute("aria-disabled", "true");
    try {
      let job = await api("POST", "/v1/exports");
      while (job.status === "queued" || job.status === "running") {
        replace(status, `Export ${job.status}…`);
        await new Promise((r) => setTimeout(r, 1000));
        job = await api("GET", `/v1/exports/${job.id}`);
      }
      if (job.status !== "done")
        throw new ApiError(0, "export_failed", `The export failed: ${job.error ?? "try again."}`);
      save(await authorizedBlob(job.download), `${job.id}.jsonl`);
      replace(status, `Exported ${job.conversations} conversation${job.conversations === 1 ? "" : "s"}.`);
    } catch (err) {
      // A 404 here is the job or its file, gone (deleted, expired), not a conversation.
      const gone = err instanceof ApiError && err.type === "not_found";
      replace(
        status,
        errorLine(gone ? "The export is gone (deleted or expired). Run Export all again." : plainError(err).text),
      );
    } finally {
      exporting = false;
      button.removeAttribute("aria-disabled");
    }
  });
  return h("span", null, button, " ", status);
}
