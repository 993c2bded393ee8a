// Sign in with an API key: checked against the API, then kept in this tab (or, asked, this browser).
import { api, ApiError, plainError, session } from "../api.js";
import { h, replace } from "../dom.js";

/** @param {HTMLElement} root @param {() => void} onSignedIn @param {string} [reason] why the form is shown (a key refused mid-session) */
export function signInView(root, onSignedIn, reason) {
  const input = h("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    placeholder: "ck_…",
  });
  const remember = /** @type {HTMLInputElement} */ (h("input", { id: "remember", type: "checkbox" }));
  const status = h("p", { class: "muted", role: "status" });
  const form = h(
    "form",
    { class: "signin panel", id: "signin-form" },
    h("h1", null, "Sign in"),
    reason ? h("p", { class: "notice", role: "alert" }, reason) : null,
    h(
      "p",
      { class: "muted" },
      "Your API key is sent only in the Authorization header. It stays in this tab unless you choose to stay signed in.",
    ),
    h("label", { for: "api-key" }, "API key"),
    input,
    h("label", { class: "check" }, remember, " Stay signed in on this browser"),
    h("button", { type: "submit" }, "Sign in"),
    status,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const key = /** @type {HTMLInputElement} */ (input).value.trim();
    if (!key) return;
    replace(status, "Checking…");
    try {
      await api("GET", "/v1/conversations?limit=1", undefined, key);
      session.signIn(key, remember.checked);
      onSignedIn();
    } catch (err) {
      replace(
        status,
        err instanceof ApiError && err.status === 401
          ? "That key is not valid."
          : `Could not sign in: ${plainError(err).text}`,
      );
      status.className = "error-line";
    }
  });
  replace(root, form);
  document.title = "Sign in · context-chat";
  input.focus();
}
