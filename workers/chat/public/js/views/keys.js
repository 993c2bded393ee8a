// API keys (#/keys): the tenant's keys (never a secret: name, last four, dates, which one this tab
// uses), a create form whose new secret is shown this once with Copy, and revoke after a confirm.
// Revoking the key this tab is signed in with signs out as any refused key does: the next request
// is refused (401), which api.js turns into the sign-in form.
import { ApiError, api, plainError, session } from "../api.js";
import { h, replace } from "../dom.js";
import { errorLine } from "../render.js";
import { clearInvalid, confirmGroup, field, inFormWords, localToIso, oneAtATime, pagedList, when } from "./fields.js";

const PAGE = 50;

/** What went wrong; a 404 here is the key (another tenant's or unknown), not a conversation. @param {unknown} err */
const said = (err) =>
  err instanceof ApiError && err.type === "not_found" ? "This key no longer exists." : plainError(err).text;

/** @param {any} k */
const label = (k) => k.name || "Unnamed key";

/**
 * Which key a control is about, when names repeat (several "Unnamed key"s): its name and last four.
 * @param {any} k
 */
const whichKey = (k) =>
  `${label(k)} ending ${k.last4 ? `…${k.last4}` : `(unknown), created ${new Date(k.createdAt).toLocaleString()}`}`;

/**
 * A key created while the person had gone on to another view: its secret, not seen yet, kept in
 * this tab's memory only until the API keys page is next drawn for the same signed-in key.
 * @type {{ owner: string, created: { key: any, apiKey: string } } | undefined}
 */
let unseen;

/** @type {Record<string, string>} */
const STATES = { active: "Active", revoked: "Revoked", expired: "Expired" };

/** @param {any} k @param {number} now */
const stateOf = (k, now) =>
  k.revokedAt ? "revoked" : k.expiresAt && Date.parse(k.expiresAt) <= now ? "expired" : "active";

/**
 * @param {HTMLElement} root
 * @param {AbortSignal} [signal] aborted once the person has gone on to another view: this one draws no more
 */
export async function keysView(root, signal) {
  document.title = "API keys · context-chat";
  const list = h("ul", { class: "items", id: "keys" });
  const listStatus = h("div", { role: "status", id: "keys-status" });
  const more = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "secondary", id: "keys-more", hidden: true }, "Load more")
  );
  const secret = h("div", { id: "new-key-slot" });
  const form = createForm({
    shown: secret,
    created: (k) => list.prepend(keyItem(k, listStatus)),
  });
  replace(
    root,
    h(
      "div",
      { class: "home manage-view" },
      h("h1", null, "API keys"),
      h(
        "p",
        { class: "muted" },
        "Each key lets a program (or this page) use the API as this tenant. To rotate a key: create a new one, move its programs to it, then revoke the old one.",
      ),
      form,
      secret,
      h(
        "section",
        { class: "panel", "aria-labelledby": "keys-heading" },
        h("h2", { id: "keys-heading" }, "Keys"),
        listStatus,
        list,
        more,
      ),
    ),
  );
  const waiting = unseen;
  unseen = undefined;
  if (waiting && waiting.owner === session.key) {
    replace(
      /** @type {HTMLElement} */ (form.querySelector("#key-form-status")),
      "A key was created while you were on another page. Copy its secret now: it will not be shown again.",
    );
    showSecret(secret, waiting.created);
  }

  await pagedList({
    path: "/v1/keys",
    limit: PAGE,
    list,
    more,
    status: listStatus,
    item: (k) => keyItem(k, listStatus),
    said,
    focusFirst: (first) => /** @type {HTMLElement | null} */ (first?.querySelector("h3") ?? null)?.focus(),
    signal,
  });
}

/**
 * The create form; a created key's secret is shown in `shown`, once.
 * @param {{ shown: HTMLElement, created: (key: any) => void }} opts
 */
function createForm({ shown, created }) {
  const name = h("input", { id: "key-name", name: "name", maxlength: "100", autocomplete: "off", dir: "auto" });
  const expires = /** @type {HTMLInputElement} */ (
    h("input", { id: "key-expires", name: "expiresAt", type: "datetime-local" })
  );
  const status = h("div", { role: "status", id: "key-form-status" });
  const submit = h("button", { type: "submit", class: "primary", id: "key-create" }, "Create key");
  /** @type {import("./fields.js").Labelled} */
  const fields = new Map([
    ["name", { label: "Name", input: name }],
    ["expiresAt", { label: "Expires", input: expires }],
  ]);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { class: "panel settings-form", id: "key-form", "aria-labelledby": "key-form-heading" },
      h("h2", { id: "key-form-heading" }, "New key"),
      field("Name", name, "Optional: what uses the key, so you know which to revoke."),
      field(
        "Expires",
        expires,
        `Optional, in your time zone${zone ? ` (${zone})` : ""}. Empty: the key never expires. A key that expires can only make keys that expire no later.`,
      ),
      h("div", { class: "form-actions" }, submit),
      status,
    )
  );
  const send = oneAtATime(submit, async () => {
    clearInvalid(fields);
    const expiresAt = expires.value ? localToIso(expires.value) : null;
    /** @param {string} why */
    const refuse = (why) => {
      expires.setAttribute("aria-invalid", "true");
      expires.focus();
      replace(status, errorLine(why));
    };
    if (expires.validity.badInput || (expires.value && !expiresAt))
      return refuse("“Expires” needs a date and time, or nothing: no key was created.");
    // A local time the clocks skip (02:30 on a spring-forward night) does not exist: the browser
    // moves it on past the jump, and the key would expire at a time nobody typed. Such a time reads
    // back from the date as another clock time.
    if (expiresAt && expiresAt.slice(0, 16) !== expires.value.slice(0, 16))
      return refuse(
        `“Expires”: ${expires.value.slice(0, 16).replace("T", " ")} does not exist in your time zone${zone ? ` (${zone})` : ""}, the clocks jump past it that night. Choose another time: no key was created.`,
      );
    /** @type {Record<string, string>} */
    const body = {};
    const named = /** @type {HTMLInputElement} */ (name).value.trim();
    if (named) body.name = named;
    if (expiresAt) body.expiresAt = expiresAt;
    replace(status, h("span", { class: "muted" }, "Creating…"));
    const mine = session.key;
    try {
      const r = await api("POST", "/v1/keys", body);
      // Signed out (perhaps another tenant signed in) meanwhile: the secret is not theirs to see.
      if (session.key !== mine || !mine) return;
      // Gone on to another view meanwhile: the secret waits for the next visit to this page (or
      // goes to the one already drawn, if the person came back before the answer).
      if (!shown.isConnected) {
        const drawn = document.getElementById("new-key-slot");
        if (drawn) showSecret(drawn, r);
        else unseen = { owner: mine, created: r };
        return;
      }
      created(r.key);
      form.reset();
      replace(status, "Key created. Copy its secret now: it will not be shown again.");
      showSecret(shown, r);
    } catch (err) {
      if (session.key === mine) replace(status, errorLine(inFormWords(said(err), fields)));
    }
  });
  form.addEventListener("submit", (e) => (e.preventDefault(), send()));
  return form;
}

/**
 * The new key's secret, this once: kept nowhere but this panel, gone with Done, another view or a
 * reload. The focus goes to Copy.
 * @param {HTMLElement} slot @param {{ key: any, apiKey: string }} created
 */
function showSecret(slot, { key, apiKey }) {
  const value = /** @type {HTMLInputElement} */ (
    h("input", {
      id: "new-key-secret",
      readonly: true,
      value: apiKey,
      autocomplete: "off",
      spellcheck: "false",
      "aria-describedby": "new-key-warning",
    })
  );
  const copied = h("span", { role: "status", id: "new-key-copied" });
  const copy = h("button", { type: "button", class: "primary", id: "new-key-copy" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(apiKey);
      replace(copied, "Copied.");
    } catch {
      // No clipboard (an older browser, no permission): the secret is selected, for the keyboard's copy.
      value.focus();
      value.select();
      replace(copied, "Copying failed: the secret is selected, copy it with Ctrl+C (⌘C on a Mac).");
    }
  });
  value.addEventListener("focus", () => value.select());
  const done = h("button", { type: "button", class: "secondary", id: "new-key-done" }, "Done");
  done.addEventListener("click", () => {
    replace(slot);
    /** @type {HTMLElement | null} */ (document.getElementById("key-name"))?.focus();
  });
  replace(
    slot,
    h(
      "section",
      { class: "panel secret-panel", "aria-labelledby": "new-key-heading" },
      h("h2", { id: "new-key-heading", dir: "auto" }, `New key: ${label(key)}`),
      h(
        "p",
        { class: "secret-warning", id: "new-key-warning" },
        h("strong", null, "Copy this secret now: it will not be shown again."),
        " The server keeps only a digest of it. If it is lost, revoke the key and create another.",
      ),
      h("label", { for: "new-key-secret" }, "Secret"),
      h("div", { class: "secret-row" }, value, copy),
      copied,
      h("div", { class: "form-actions" }, done),
    ),
  );
  copy.focus();
}

/**
 * One key in the list: what it is and, while active, Revoke (after a confirm).
 * @param {any} initial @param {HTMLElement} listStatus
 */
function keyItem(initial, listStatus) {
  let k = initial;
  const li = h("li", { class: "item key", "data-id": k.id });
  const status = h("div", { class: "item-status", role: "status" });
  const revoke = h("button", { type: "button", class: "small ghost key-revoke" }, "Revoke");
  const actions = h("div", { class: "item-actions" }, revoke);
  const heading = h("h3", { class: "item-name", dir: "auto", tabindex: "-1" });
  const info = h("div", { class: "item-info" });
  const draw = () => {
    const state = stateOf(k, Date.now());
    replace(heading, label(k));
    replace(
      info,
      h(
        "div",
        { class: "item-head" },
        heading,
        k.current ? h("span", { class: "badge this-key" }, "This key") : null,
        h("span", { class: `badge ${state === "active" ? "on" : "off"}` }, STATES[state]),
      ),
      h(
        "p",
        { class: "item-meta" },
        "ending ",
        h("code", null, k.last4 ? `…${k.last4}` : "(unknown)"),
        " · created ",
        when(k.createdAt),
        " · ",
        k.expiresAt ? [state === "expired" ? "expired " : "expires ", when(k.expiresAt)] : "never expires",
        k.revokedAt ? [" · revoked ", when(k.revokedAt)] : null,
      ),
    );
    revoke.setAttribute("aria-label", `Revoke ${whichKey(k)}`);
    actions.hidden = state !== "active";
  };
  draw();
  replace(li, info, actions, status);

  revoke.addEventListener("click", () => {
    // Keep (or Escape) puts the actions back with the focus on Revoke, where it was.
    const keep = () => {
      confirm.replaceWith(actions);
      revoke.focus();
    };
    const yes = h("button", { type: "button", class: "small danger confirm-revoke" }, "Revoke");
    const confirm = confirmGroup({
      label: "Confirm revoke",
      question: k.current
        ? "Revoke the key this tab is signed in with? You will be signed out here, and every program using it is refused. "
        : "Revoke this key? Every program using it is refused from now on. ",
      yes,
      keep,
    });
    yes.addEventListener(
      "click",
      oneAtATime(yes, async () => {
        // The answer is about this key's session only: after Sign out (and perhaps another
        // tenant's sign-in in this tab) it changes nothing on the page.
        const mine = session.key;
        let revoked;
        try {
          revoked = (await api("DELETE", `/v1/keys/${encodeURIComponent(k.id)}`)).key;
        } catch (err) {
          if (session.key !== mine) return;
          // A 409 (the tenant's last active key) says why in the API's words.
          keep();
          return void replace(status, errorLine(said(err)));
        }
        if (session.key !== mine || !mine) return;
        if (k.current) return signedOutByRevoke(mine);
        k = { ...k, ...revoked };
        confirm.replaceWith(actions);
        draw();
        replace(listStatus, `Revoked “${label(k)}”: programs using it are refused.`);
        heading.focus();
      }),
    );
    actions.replaceWith(confirm);
    yes.focus();
  });
  return li;
}

/**
 * This tab's own key was revoked: the next request with it is refused (401), and api.js signs out
 * as for any refused key. In another data center a cache may accept it for up to a minute more:
 * the revocation's answer is proof enough, so the tab signs out the same way then too, unless the
 * person signed out (or another key signed in) meanwhile.
 * @param {string} revoked the key revoked, the one this tab was signed in with
 */
async function signedOutByRevoke(revoked) {
  try {
    await api("GET", "/v1/keys?limit=1", undefined, revoked);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return;
  }
  if (session.key === revoked) window.dispatchEvent(new CustomEvent("unauthorized"));
}
