// The router: hash routes, so every view is the same cached index.html and no server fallback is
// needed. #/ new chat · #/c/<id> chat · #/c/<id>/settings · #/c/<id>/history?at=<msg> ·
// #/c/<id>/replay · #/search?q= · #/manage (all chats, import, export) · #/automations · #/keys ·
// #/projects · #/projects/<id> · #/?project=<id> (a new chat in that project)
import { session } from "./api.js";
import { replace } from "./dom.js";
import { applyPrefs, currentTheme, devView, setDevView, toggleTheme } from "./prefs.js";
import { errorLine } from "./render.js";
import { automationsView } from "./views/automations.js";
import { chatView } from "./views/chat.js";
import { historyView } from "./views/history.js";
import { manageView, newChatView } from "./views/home.js";
import { keysView } from "./views/keys.js";
import { projectsView, projectView } from "./views/projects.js";
import { replayView } from "./views/replay.js";
import { searchView } from "./views/search.js";
import { settingsView } from "./views/settings.js";
import { mountSidebar } from "./views/sidebar.js";
import { signInView } from "./views/signin.js";

const root = /** @type {HTMLElement} */ (document.getElementById("view"));
const sidebarEl = /** @type {HTMLElement} */ (document.getElementById("sidebar-main"));
const menuButton = /** @type {HTMLButtonElement} */ (document.getElementById("sidebar-toggle"));
const themeButton = /** @type {HTMLButtonElement} */ (document.getElementById("theme-toggle"));
const closeButton = /** @type {HTMLButtonElement} */ (document.getElementById("sidebar-close"));
/** What the open drawer covers on a phone: none of it takes the focus while the drawer is open. */
const behindDrawer = /** @type {HTMLElement[]} */ (
  [root, document.querySelector(".top"), document.querySelector(".skip-link")].filter(Boolean)
);
const devToggle = /** @type {HTMLInputElement} */ (document.getElementById("dev-toggle"));
const sidebar = mountSidebar(sidebarEl);
/** @type {(() => void) | void} */
let cleanup;
let generation = 0;
/** Aborted when the next navigation begins: a view still loading then draws nothing over its successor. */
let navigation = new AbortController();
/** Set when a key was refused mid-session: the sign-in form says why. */
let signedOutBecause = "";
/** A new chat's first message, handed to the chat view it opens. */
let firstMessage = "";
/**
 * Set by Sign out until the next sign-in, which forgets the person's data again: a view still
 * finishing then (a new chat's first message whose sending fails) may have put its draft back.
 */
let signedOutByPerson = false;
/** How many times Sign out was clicked: a new chat created across one opens nothing. */
let signOuts = 0;

/** The views with a path of their own, by path. */
const PAGES = new Map([
  ["/search", "search"],
  ["/manage", "manage"],
  ["/automations", "automations"],
  ["/keys", "keys"],
  ["/projects", "projects"],
]);

/** @param {boolean} [byPerson] a navigation the person made (a link, the search box, Back), not the page's first load */
async function route(byPerson = false) {
  const gen = ++generation;
  navigation.abort();
  navigation = new AbortController();
  const { signal } = navigation;
  cleanup?.();
  cleanup = undefined;
  closeSidebar();
  /** Where the focus was when the navigation began: the view does not take it from anywhere else. */
  const from = document.activeElement;
  if (!session.key) {
    // Signed out (by the button or a refused key): nothing of the session stays on the page, for
    // whoever signs in next in this tab, perhaps with another tenant's key.
    /** @type {HTMLInputElement} */ (document.getElementById("search-q")).value = "";
    sidebar.clear();
    document.body.dataset.signedIn = "false";
    document.body.dataset.view = "signin";
    signInView(
      root,
      () => {
        signedOutBecause = "";
        if (signedOutByPerson) session.forgetPerson();
        signedOutByPerson = false;
        route();
      },
      signedOutBecause,
    );
    return;
  }
  if (document.body.dataset.signedIn !== "true") sidebar.load();
  document.body.dataset.signedIn = "true";
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = hash.split("?");
  const params = new URLSearchParams(query);
  const m = /^\/c\/(conv_[A-Za-z0-9_-]+)(?:\/(history|replay|settings))?$/.exec(path);
  const project = /^\/projects\/(proj_[A-Za-z0-9_-]+)$/.exec(path);
  const view = m ? (m[2] ?? "chat") : project ? "project" : (PAGES.get(path) ?? "home");
  document.body.dataset.view = view;
  markPage(path);
  try {
    if (m && m[2] === "history") await historyView(root, m[1], params, signal);
    else if (m && m[2] === "replay") await replayView(root, m[1], signal);
    else if (m && m[2] === "settings") await settingsView(root, m[1], signal);
    else if (m) {
      const first = firstMessage;
      firstMessage = "";
      const stop = await chatView(root, m[1], { firstMessage: first });
      if (gen === generation) cleanup = stop;
      else stop();
    } else if (path === "/search") await searchView(root, params);
    else if (path === "/manage") await manageView(root);
    else if (path === "/automations") await automationsView(root, signal);
    else if (path === "/keys") await keysView(root, signal);
    else if (path === "/projects") await projectsView(root, signal);
    else if (project) await projectView(root, project[1], signal);
    else {
      const before = signOuts;
      await newChatView(
        root,
        (id, first) => {
          // Signed out while the conversation was being created: the message goes with the person.
          if (signOuts !== before) return;
          firstMessage = first;
          location.hash = `#/c/${id}`;
        },
        { projectId: params.get("project") || undefined, signal },
      );
    }
  } catch (err) {
    if (gen === generation && session.key) replace(root, errorLine(err));
  }
  // The link that opened the view was replaced with it, which drops the focus to the top of the page:
  // it goes to the view's heading instead, unless the person has moved it while the view loaded. The
  // chat and new-chat views focus their composer.
  const now = document.activeElement;
  const untouched = !now || now === document.body || now === from || sameControl(now, from);
  if (byPerson && gen === generation && untouched && view !== "chat" && view !== "home") focusView();
}

/**
 * The sidebar's links to the account's pages say which one is open (Projects for a project's page too).
 * @param {string} path
 */
function markPage(path) {
  const page = path.startsWith("/projects/") ? "/projects" : path;
  for (const a of document.querySelectorAll(".account a[href^='#/']")) {
    if (a.getAttribute("href") === `#${page}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

/**
 * The same control drawn again (the sidebar's list redrawn while the view loaded keeps the focus on
 * the new copy of the link): its id or its link target.
 * @param {Element} a
 * @param {Element | null} b
 */
function sameControl(a, b) {
  if (!b) return false;
  const href = a.getAttribute("href");
  return (a.id !== "" && a.id === b.id) || (href !== null && href === b.getAttribute("href"));
}

/** The focus to the view's heading (or the view), as the skip link does; without a scroll, so a
 * History opened at a message or at the fold boundary stays there. */
function focusView() {
  const target = /** @type {HTMLElement} */ (root.querySelector("h1") ?? root);
  target.setAttribute("tabindex", "-1");
  target.focus({ preventScroll: true });
}

/** @param {boolean} open */
function setSidebar(open) {
  document.body.classList.toggle("sidebar-open", open);
  menuButton.setAttribute("aria-expanded", String(open));
  // The page behind the open drawer takes no focus: Tab stays in the drawer (the header is under its
  // backdrop), and ✕ or Escape or a tap beside it closes it.
  for (const el of behindDrawer) el.inert = open;
}

function closeSidebar() {
  const wasOpen = document.body.classList.contains("sidebar-open");
  const active = document.activeElement;
  setSidebar(false);
  // Focus left inside the closed drawer (or lost by a tap on the backdrop) goes back to the button that opened it.
  if (wasOpen && (!active || active === document.body || document.getElementById("sidebar")?.contains(active)))
    menuButton.focus();
}

// Wide enough for the sidebar beside the page: the drawer closes, so the page is never left inert.
matchMedia("(min-width: 761px)").addEventListener("change", (e) => e.matches && closeSidebar());

// The skip link moves the focus to the view; as a hash it would be taken for a route.
document.querySelector(".skip-link")?.addEventListener("click", (e) => {
  e.preventDefault();
  root.setAttribute("tabindex", "-1");
  root.focus();
});
menuButton.addEventListener("click", () => {
  // While open, ☰ is under the drawer's backdrop: this click always opens it.
  setSidebar(true);
  document.getElementById("new-chat")?.focus();
});
closeButton.addEventListener("click", closeSidebar);
document.getElementById("sidebar-backdrop")?.addEventListener("click", closeSidebar);
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && document.body.classList.contains("sidebar-open")) closeSidebar();
});

const labelTheme = () => {
  const next = currentTheme() === "dark" ? "light" : "dark";
  themeButton.setAttribute("aria-label", `Switch to ${next} theme`);
  themeButton.title = `Switch to ${next} theme`;
  themeButton.textContent = next === "dark" ? "☾" : "☀";
};
themeButton.addEventListener("click", () => (toggleTheme(), labelTheme()));
devToggle.checked = devView();
devToggle.addEventListener("change", () => setDevView(devToggle.checked));

document.getElementById("search-form")?.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = /** @type {HTMLInputElement} */ (document.getElementById("search-q")).value.trim();
  if (q) location.hash = `#/search?q=${encodeURIComponent(q)}`;
});
// Sign out forgets the person's drafts (a refused key keeps them: whoever signs in again finds them).
document.getElementById("sign-out")?.addEventListener("click", () => {
  session.signOut();
  firstMessage = "";
  location.hash = "#/";
  route();
  // After route(): the view it closed has put its composer's text in its draft by now.
  session.forgetPerson();
  signedOutByPerson = true;
  signOuts++;
});
// Any 401 (a revoked or expired key): the sign-in form, saying why.
window.addEventListener("unauthorized", () => {
  if (!session.key) return;
  session.signOut();
  signedOutBecause = "Your API key was refused (revoked or expired). Sign in again to continue.";
  route();
});
window.addEventListener("hashchange", () => route(true));
// A file dropped outside a drop zone (the chat's, the new-chat page's note) would open in the tab
// and leave the app, taking what was typed with it: the page refuses it instead. A zone that takes
// the drop cancels the event itself, so these only see the drops nobody took.
window.addEventListener("dragover", (e) => {
  if (e.defaultPrevented || !e.dataTransfer?.types.includes("Files")) return;
  e.preventDefault();
  e.dataTransfer.dropEffect = "none";
});
window.addEventListener("drop", (e) => e.preventDefault());
applyPrefs();
labelTheme();
route();
