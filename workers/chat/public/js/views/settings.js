// A conversation's settings as a form instead of JSON: the model (from GET /v1/models), thinking,
// its budget (under "enabled" only), display and effort as the chosen model allows them, and the
// context-management numbers under "Advanced". Only what changed is sent (PATCH), and a refusal
// names the field.
import { api, plainError } from "../api.js";
import { h, replace } from "../dom.js";
import { conversationsChanged } from "../prefs.js";
import { errorLine } from "../render.js";

/** @type {Promise<any[]> | null} */
let catalog = null;
/**
 * The models a conversation or a project may use now (not retired), cached for the page's life
 * once they loaded: a failed request is forgotten, so the next use asks again.
 */
export const models = () =>
  (catalog ??= api("GET", "/v1/models").then(
    (r) => r.data.filter((/** @type {any} */ m) => m.status !== "retired"),
    (err) => {
      catalog = null;
      throw err;
    },
  ));

/**
 * The model picker. A current model the catalog does not list (retired, or one only the API names)
 * is an option of its own, chosen and marked "(current)": otherwise the browser would show the first
 * model, and a Save would switch to it unasked.
 * @param {string | null} current @param {string} [id]
 */
export async function modelSelect(current, id = "new-model") {
  const all = await models();
  const chosen = current ?? all.find((/** @type {any} */ m) => m.default)?.id ?? all[0]?.id;
  const unlisted = current && !all.some((/** @type {any} */ m) => m.id === current);
  return h(
    "select",
    { id, name: "model" },
    unlisted ? h("option", { value: current, selected: true }, `${current} (current)`) : null,
    all.map((/** @type {any} */ m) =>
      h(
        "option",
        { value: m.id, selected: m.id === chosen },
        `${m.name ?? m.id}${m.status === "active" ? "" : ` (${m.status})`}`,
      ),
    ),
  );
}

/** The numbers under "Advanced" with their labels (a project's settings form shows the same). */
export const ADVANCED = [
  ["contextWindowTokens", "Context window (tokens)"],
  ["outputReserveTokens", "Output reserve (tokens)"],
  ["foldThresholdChars", "Summarize after (characters)"],
  ["tailMessages", "Messages kept verbatim"],
  ["compactTriggerRatio", "Compact at (share of window)"],
  ["compactTargetRatio", "Compact down to (share of window)"],
  ["maxToolIterations", "Model calls per turn"],
];

/**
 * @param {HTMLElement} root @param {string} id
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one is not drawn
 */
export async function settingsView(root, id, signal) {
  replace(root, h("p", { class: "muted" }, "Loading…"));
  document.title = "Settings · context-chat";
  /** @type {any} */ let meta;
  /** @type {any[]} */ let all;
  try {
    [meta, all] = await Promise.all([api("GET", `/v1/conversations/${id}`), models()]);
  } catch (err) {
    if (!signal?.aborted) replace(root, errorLine(plainError(err).text));
    return;
  }
  const s = meta.settings ?? {};
  const model = /** @type {HTMLSelectElement} */ (await modelSelect(s.model, "set-model"));
  if (signal?.aborted) return;
  const named = () => (document.title = `Settings · ${meta.title || "New chat"} · context-chat`);
  named();
  const thinking = /** @type {HTMLSelectElement} */ (h("select", { id: "set-thinking", name: "thinking" }));
  const display = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      { id: "set-display", name: "thinkingDisplay" },
      h("option", { value: "summarized" }, "Show a summary"),
      h("option", { value: "omitted" }, "Hide it"),
    )
  );
  const effort = /** @type {HTMLSelectElement} */ (h("select", { id: "set-effort", name: "effort" }));
  const title = /** @type {HTMLInputElement} */ (
    h("input", { id: "set-title", value: meta.title ?? "", maxlength: "200" })
  );
  // Manual thinking's budget: offered only while Thinking is "enabled" (no other mode takes one).
  // Empty is null, the server's default (8,000 within half of max_tokens).
  const budget = /** @type {HTMLInputElement} */ (
    h("input", {
      id: "set-thinkingBudgetTokens",
      name: "thinkingBudgetTokens",
      type: "number",
      step: "any",
      placeholder: "Default",
    })
  );
  const budgetRow = h("label", { class: "field" }, h("span", null, "Thinking budget (tokens)"), budget);
  const manual = () => thinking.value === "enabled";
  const showBudget = () => {
    budgetRow.hidden = !manual();
    budget.disabled = !manual();
  };
  thinking.addEventListener("change", showBudget);
  const fill = () => {
    const m = all.find((x) => x.id === model.value);
    const modes = m?.thinking?.modes ?? ["auto"];
    replace(
      thinking,
      ["auto", ...modes.filter((/** @type {string} */ x) => x !== "auto")].map((x) =>
        h(
          "option",
          { value: x, selected: x === (s.thinking ?? "auto") },
          x === "auto" ? "Model default" : x.replace("_", " "),
        ),
      ),
    );
    const levels = m?.effort?.levels ?? [];
    replace(
      effort,
      h("option", { value: "" }, "Model default"),
      levels.map((/** @type {string} */ x) => h("option", { value: x, selected: x === s.effort }, x)),
    );
    effort.disabled = !levels.length;
    showBudget();
  };
  model.addEventListener("change", fill);
  const numbers = ADVANCED.map(([key, label]) => {
    const input = /** @type {HTMLInputElement} */ (
      h("input", { id: `set-${key}`, name: key, type: "number", step: "any" })
    );
    return { key, label, input, row: h("label", { class: "field" }, h("span", null, label), input) };
  });
  // The form shows the settings as the server holds them: drawn at first, and again after each save
  // (a model switch changes its numbers), so a later save compares against them and sends only what
  // the person changed.
  /** The model the form showed when drawn: a Save sends the model only when the person picked another. */
  let shownModel = model.value;
  const draw = () => {
    shownModel = model.value;
    display.value = s.thinkingDisplay ?? "summarized";
    fill();
    for (const n of numbers) n.input.value = String(s[n.key] ?? "");
    budget.value = String(s.thinkingBudgetTokens ?? "");
    title.value = meta.title ?? "";
  };
  draw();
  const status = h("div", { role: "status", id: "settings-status" });
  const field = (/** @type {string} */ label, /** @type {HTMLElement} */ input) =>
    h("label", { class: "field" }, h("span", null, label), input);
  const advanced = /** @type {HTMLDetailsElement} */ (
    h(
      "details",
      { class: "advanced" },
      h("summary", null, "Advanced: context management"),
      numbers.map((n) => n.row),
    )
  );
  const form = h(
    "form",
    { class: "panel settings-form", id: "settings-form" },
    h("h1", null, "Chat settings"),
    field("Name", title),
    field("Model", model),
    field("Thinking", thinking),
    budgetRow,
    field("Thinking shown", display),
    field("Effort", effort),
    advanced,
    h(
      "div",
      { class: "form-actions" },
      h("a", { href: `#/c/${id}` }, "Back to the chat"),
      h("button", { type: "submit", class: "primary" }, "Save"),
    ),
    status,
  );
  /**
   * Each field a refusal may name (`settings.<key>`), with the label the form shows it under; the
   * settings the form has no field for (set through the API, kept by a Save: a model switch may
   * leave them refused) by their name in words, with no field to focus.
   * @type {Map<string, { label: string, input?: HTMLElement }>}
   */
  const labelled = new Map([
    ["serverTools", { label: "Server tools", input: undefined }],
    ["refusalFallbackModel", { label: "Refusal fallback model", input: undefined }],
    ["model", { label: "Model", input: model }],
    ["thinking", { label: "Thinking", input: thinking }],
    ["thinkingBudgetTokens", { label: "Thinking budget (tokens)", input: budget }],
    ["thinkingDisplay", { label: "Thinking shown", input: display }],
    ["effort", { label: "Effort", input: effort }],
    ...numbers.map((n) => /** @type {[string, { label: string, input?: HTMLElement }]} */ ([n.key, n])),
  ]);
  /**
   * A refusal in the form's words: each `settings.<key>` it names is shown as that field's label,
   * and the focus goes to the first such field ("Advanced" opened when it is there).
   * @param {string} text
   */
  const refusal = (text) => {
    /** @type {HTMLElement | null} */
    let first = null;
    const said = text.replace(/\bsettings\.(\w+)/g, (whole, /** @type {string} */ key) => {
      const f = labelled.get(key);
      if (!f) return whole;
      first ??= f.input ?? null;
      return `"${f.label}"`;
    });
    if (first) {
      if (advanced.contains(first)) advanced.open = true;
      /** @type {HTMLElement} */ (first).focus();
    }
    return said;
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    /** @type {Record<string, unknown>} */
    const patch = {};
    // Every number has a value (the server holds one for each): an emptied field, or one the
    // browser cannot read as a number, is named and nothing is saved, rather than left out unsaid.
    const unset = numbers.find((n) => n.input.value === "");
    if (unset) {
      advanced.open = true;
      unset.input.focus();
      return replace(status, errorLine(`${unset.label} needs a number: nothing was saved.`));
    }
    // Empty is the default, so a budget the browser cannot read (its value is "" too) is named.
    if (manual() && budget.validity.badInput) {
      budget.focus();
      return replace(
        status,
        errorLine("Thinking budget (tokens) needs a number, or nothing for the default: nothing was saved."),
      );
    }
    if (model.value !== shownModel) patch.model = model.value;
    if (thinking.value !== (s.thinking ?? "auto")) patch.thinking = thinking.value;
    // The budget goes only with thinking "enabled", and only when changed: an emptied field sends
    // null (the default) where the server held a number.
    if (manual()) {
      const wanted = budget.value === "" ? null : Number(budget.value);
      if (wanted !== (s.thinkingBudgetTokens ?? null)) patch.thinkingBudgetTokens = wanted;
    }
    if (display.value !== (s.thinkingDisplay ?? "summarized")) patch.thinkingDisplay = display.value;
    if ((effort.value || null) !== (s.effort ?? null)) patch.effort = effort.value || null;
    for (const n of numbers) if (Number(n.input.value) !== s[n.key]) patch[n.key] = Number(n.input.value);
    /** @type {Record<string, unknown>} */
    const body = {};
    if (Object.keys(patch).length) body.settings = patch;
    if (title.value.trim() && title.value.trim() !== meta.title) body.title = title.value.trim();
    if (!Object.keys(body).length) return replace(status, "Nothing changed.");
    try {
      meta = await api("PATCH", `/v1/conversations/${id}`, body);
      Object.assign(s, meta.settings);
      draw();
      if (!signal?.aborted) named();
      replace(status, "Saved.");
      // A new name is the sidebar's at once (its listing may lag the rename by a moment).
      conversationsChanged(body.title ? { id, title: meta.title ?? body.title } : undefined);
    } catch (err) {
      replace(status, errorLine(refusal(plainError(err).text)));
    }
  });
  replace(root, form);
}
