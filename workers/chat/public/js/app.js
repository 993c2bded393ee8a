// The router: hash routes, so every view is the same cached index.html and no server fallback is
// needed. #/ new chat · #/c/<id> chat · #/c/<id>/settings · #/c/<id>/history?at=<msg> ·
// #/c/<id>/replay · #/search?q= · #/manage (all chats, import, export)
import { session } from "./api.js";
import { replace } from "./dom.js";
import { applyPrefs, currentTheme, devView, setDevView, toggleTheme } from "./prefs.js";
import { errorLine } from "./render.js";
import { chatView } from "./views/chat.js";
import { historyView } from "./views/history.js";
import { manageView, newChatView } from "./views/home.js";
import { replayView } from "./views/replay.js";
import { searchView } from "./views/search.js";
import { settingsView } from "./views/settings.js";
import { mountSidebar } from "./views/sidebar.js";
import { signInView } from "./views/signin.js";

const root = /** @type {HTMLElement} */ (document.getElementById("view"));
const sidebarEl = /** @type {HTMLElement} */ (document.getElementById("sidebar-main"));
const menuButton = /** @type {HTMLButtonElement} */ (document.getElementById("sidebar-toggle"));
const themeButton = /** @type {HTMLButtonElement} */ (document.getElementById("theme-toggle"));
const devToggle = /** @type {HTMLInputElement} */ (document.getElementById("dev-toggle"));
const sidebar = mountSidebar(sidebarEl);
/** @type {(() => void) | void} */
let cleanup;
let generation = 0;
/** Set when a key was refused mid-session: the sign-in form says why. */
let signedOutBecause = "";
/** A new chat's first message, handed to the chat view it opens. */
let firstMessage = "";

async function route() {
  const gen = ++generation;
  cleanup?.();
  cleanup = undefined;
  closeSidebar();
  if (!session.key) {
    document.body.dataset.signedIn = "false";
    document.body.dataset.view = "signin";
    signInView(root, () => ((signedOutBecause = ""), route()), signedOutBecause);
    return;
  }
  if (document.body.dataset.signedIn !== "true") sidebar.load();
  document.body.dataset.signedIn = "true";
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = hash.split("?");
  const params = new URLSearchParams(query);
  const m = /^\/c\/(conv_[A-Za-z0-9_-]+)(?:\/(history|replay|settings))?$/.exec(path);
  document.body.dataset.view = m
    ? (m[2] ?? "chat")
    : path === "/search"
      ? "search"
      : path === "/manage"
        ? "manage"
        : "home";
  try {
    if (m && m[2] === "history") await historyView(root, m[1], params);
    else if (m && m[2] === "replay") await replayView(root, m[1]);
    else if (m && m[2] === "settings") await settingsView(root, m[1]);
    else if (m) {
      const first = firstMessage;
      firstMessage = "";
      const stop = await chatView(root, m[1], { firstMessage: first });
      if (gen === generation) cleanup = stop;
      else stop();
    } else if (path === "/search") await searchView(root, params);
    else if (path === "/manage") await manageView(root);
    else
      await newChatView(root, (id, first) => {
        firstMessage = first;
        location.hash = `#/c/${id}`;
      });
  } catch (err) {
    if (gen === generation && session.key) replace(root, errorLine(err));
  }
}

function closeSidebar() {
  const inside = document.getElementById("sidebar")?.contains(document.activeElement);
  document.body.classList.remove("sidebar-open");
  menuButton.setAttribute("aria-expanded", "false");
  root.inert = false;
  // Focus left inside the closed drawer goes back to the button that opened it.
  if (inside) menuButton.focus();
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
  const open = !document.body.classList.contains("sidebar-open");
  document.body.classList.toggle("sidebar-open", open);
  menuButton.setAttribute("aria-expanded", String(open));
  // The page behind the open drawer takes no focus (Tab stays in the drawer and the header).
  root.inert = open;
  if (open) document.getElementById("new-chat")?.focus();
});
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
document.getElementById("sign-out")?.addEventListener("click", () => {
  session.signOut();
  location.hash = "#/";
  route();
});
// Any 401 (a revoked or expired key): the sign-in form, saying why.
window.addEventListener("unauthorized", () => {
  if (!session.key) return;
  session.signOut();
  signedOutBecause = "Your API key was refused (revoked or expired). Sign in again to continue.";
  route();
});
window.addEventListener("hashchange", route);
applyPrefs();
labelTheme();
route();
