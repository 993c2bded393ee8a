// The calls a paused turn waits on (client tools): each with its input and a field for a person to
// answer it by hand, sent together as one `tool_results` frame (the API wants every pending id at once),
// once: Send results waits for the server's word before it can be pressed again.
import { h } from "../dom.js";

/**
 * @param {{turnId: string, calls: {id: string, name: string, input: unknown}[], expiresAt: string}} action
 * @param {(results: {tool_use_id: string, content: string, is_error?: boolean}[]) => Promise<boolean>} submit
 * posts the results: true once the server took them (the turn goes on), false when the post failed
 * @returns {HTMLElement}
 */
export function pendingCallsPanel(action, submit) {
  const rows = action.calls.map((call) => {
    const answer = /** @type {HTMLTextAreaElement} */ (
      h("textarea", { rows: "2", required: true, "aria-label": `Result of ${call.name}`, "data-answer": call.id })
    );
    const failed = /** @type {HTMLInputElement} */ (h("input", { type: "checkbox", "data-error": call.id }));
    const row = h(
      "fieldset",
      { class: "pending-call", "data-pending-call": call.id },
      h(
        "legend",
        null,
        h("span", { class: "tag" }, "client tool"),
        " ",
        h("strong", null, call.name),
        " ",
        h("code", { class: "muted" }, call.id),
      ),
      h("pre", null, JSON.stringify(call.input ?? {}, null, 2)),
      answer,
      h("label", { class: "muted" }, failed, " the call failed (is_error)"),
    );
    return { call, answer, failed, row };
  });
  const button = h("button", { type: "submit", id: "send-results" }, "Send results");
  const form = h(
    "form",
    { class: "pending-calls", id: "pending-calls" },
    h(
      "p",
      null,
      `The turn waits for ${rows.length === 1 ? "this call's result" : `these ${rows.length} calls' results`} until ${new Date(action.expiresAt).toLocaleTimeString()}; then it ends with the calls marked interrupted.`,
    ),
    rows.map((r) => r.row),
    button,
  );
  // One post at a time: clicks while it is on its way, or once the turn goes on, are ignored; a
  // failed post offers the button again.
  let posting = false;
  /** @param {boolean} busy */
  const busy = (busy) => {
    posting = busy;
    // aria-disabled, not disabled: a disabled button would drop the focus to the top of the page.
    if (busy) button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
    button.textContent = busy ? "Sending…" : "Send results";
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (posting) return;
    busy(true);
    const taken = await submit(
      rows.map((r) => ({
        tool_use_id: r.call.id,
        content: r.answer.value,
        ...(r.failed.checked ? { is_error: true } : {}),
      })),
    );
    if (!taken) busy(false);
  });
  return form;
}
