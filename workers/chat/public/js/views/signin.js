// Sign in with an API key: checked against the API, then kept in this tab's sessionStorage only.
import { api, ApiError, session } from "../api.js";
import { h, replace } from "../dom.js";

/** @param {HTMLElement} root @param {() => void} onSignedIn */
export function signInView(root, onSignedIn) {
  const input = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true, placeholder: "API key", "aria-label": "API key" });
  const status = h("p", { class: "muted", role: "status" });
  const form = h(
    "form",
    { class: "signin panel", id: "signin-form" },
    h("h1", null, "Sign in"),
    h("p", { class: "muted" }, "Your API key stays in this browser tab (session storage) and is sent only in the Authorization header."),
    input,
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
      session.signIn(key);
      onSignedIn();
    } catch (err) {
      replace(status, err instanceof ApiError && err.status === 401 ? "That key is not valid." : `Could not sign in: ${err instanceof Error ? err.message : err}`);
      status.className = "error-line";
    }
  });
  replace(root, form);
  input.focus();
}
