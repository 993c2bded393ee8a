// The router: hash routes, so every view is the same cached index.html and no server fallback is
// needed. #/ conversations · #/c/<id> chat · #/c/<id>/history?at=<msg> · #/c/<id>/replay · #/search?q=
import { session } from "./api.js";
import { replace } from "./dom.js";
import { errorLine } from "./render.js";
import { chatView } from "./views/chat.js";
import { historyView } from "./views/history.js";
import { homeView } from "./views/home.js";
import { replayView } from "./views/replay.js";
import { searchView } from "./views/search.js";
import { signInView } from "./views/signin.js";

const root = /** @type {HTMLElement} */ (document.getElementById("view"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));
/** @type {(() => void) | void} */
let cleanup;
let generation = 0;

async function route() {
  const gen = ++generation;
  cleanup?.();
  cleanup = undefined;
  if (!session.key) {
    nav.hidden = true;
    signInView(root, route);
    return;
  }
  nav.hidden = false;
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query = ""] = hash.split("?");
  const params = new URLSearchParams(query);
  const m = /^\/c\/(conv_[A-Za-z0-9_-]+)(?:\/(history|replay))?$/.exec(path);
  document.body.dataset.view = m ? m[2] ?? "chat" : path === "/search" ? "search" : "home";
  try {
    if (m && m[2] === "history") await historyView(root, m[1], params);
    else if (m && m[2] === "replay") await replayView(root, m[1]);
    else if (m) {
      const stop = await chatView(root, m[1]);
      if (gen === generation) cleanup = stop;
      else stop();
    } else if (path === "/search") await searchView(root, params);
    else await homeView(root);
  } catch (err) {
    replace(root, errorLine(err));
  }
}

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
window.addEventListener("unauthorized", () => {
  session.signOut();
  route();
});
window.addEventListener("hashchange", route);
route();
