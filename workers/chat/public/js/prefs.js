// What this browser remembers for the person (localStorage, only once they change it): the theme
// and the developer view. Plus the page's one polite live region, for short status lines.

const THEME = "context-chat.theme";
const DEV = "context-chat.devView";
/** The browser's own preferences, not the person's data: a sign-out keeps them. */
export const DEVICE_PREFS = [THEME, DEV];

/** @returns {"light" | "dark"} */
export function currentTheme() {
  const chosen = localStorage.getItem(THEME);
  if (chosen === "light" || chosen === "dark") return chosen;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function applyPrefs() {
  document.documentElement.dataset.theme = currentTheme();
  document.body.classList.toggle("dev", localStorage.getItem(DEV) === "1");
}

export function toggleTheme() {
  localStorage.setItem(THEME, currentTheme() === "dark" ? "light" : "dark");
  applyPrefs();
}

export const devView = () => localStorage.getItem(DEV) === "1";

/** @param {boolean} on */
export function setDevView(on) {
  if (on) localStorage.setItem(DEV, "1");
  else localStorage.removeItem(DEV);
  applyPrefs();
}

/** A short line for screen readers (the page's only aria-live region). @param {string} text */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A new text node in a cleared region is read even when the words repeat.
  setTimeout(() => (region.textContent = text), 50);
}

/**
 * The sidebar reloads its list (a conversation was created, renamed, titled or deleted); `titled`
 * names a new title it shows at once (the listing may lag the change by a moment).
 * @param {{ id: string, title: string }} [titled]
 */
export const conversationsChanged = (titled) =>
  window.dispatchEvent(new CustomEvent("conversations-changed", { detail: titled }));
