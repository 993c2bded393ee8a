// The web UI in Chromium: Sign out forgets the person's unsent drafts (a chat left with text in its
// composer, and the chat open when Sign out is clicked), so whoever signs in next in the tab finds
// empty composers and no `draft:` key in the tab's storage; the theme, a device preference, stays.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, KEY } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const { browser, contexts } = browserForFile();

async function signIn(p: Page) {
  await p.fill("#api-key", KEY);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form", { timeout: 60_000 });
}
/** A chat opened, its socket live and its stored draft (if any) back in the composer. */
async function open(p: Page, id: string) {
  await p.evaluate((h) => (location.hash = h), `#/c/${id}`);
  await p.waitForSelector("#socket-status.live", { state: "attached" });
  await p.waitForLoadState("networkidle");
  await p.waitForTimeout(300);
}
const storedDrafts = (p: Page) =>
  p.evaluate(() =>
    [...Object.keys(sessionStorage), ...Object.keys(localStorage)].filter((k) => k.startsWith("draft:")),
  );

describe("web UI: sign-out and drafts", () => {
  it("Sign out removes every unsent draft; signed in again, the composers are empty; the theme stays", async () => {
    const a = (await api("POST", "/v1/conversations", { title: `Draft left ${Date.now()}` })).json.id as string;
    const b = (await api("POST", "/v1/conversations", { title: `Draft open ${Date.now()}` })).json.id as string;
    const p = await signedInTab(browser(), contexts);
    await p.click("#theme-toggle");
    const theme = await p.evaluate(() => localStorage.getItem("context-chat.theme"));
    expect(theme).toMatch(/^(light|dark)$/);

    // Chat A left with text in its composer: kept as its draft (as the page does for the same person).
    await open(p, a);
    await p.fill("#composer", "A draft about the secret merger");
    await open(p, b);
    expect(await storedDrafts(p)).toEqual([`draft:${a}`]);
    // Chat B still open, with text in its composer, when Sign out is clicked.
    await p.fill("#composer", "Another private thought");

    await p.click("#sign-out");
    await p.waitForSelector("#signin-form");
    expect(await storedDrafts(p)).toEqual([]);
    expect(await p.evaluate(() => JSON.stringify({ ...sessionStorage }))).not.toContain("secret merger");
    expect(await p.evaluate(() => JSON.stringify({ ...sessionStorage }))).not.toContain("private thought");
    // A device preference is not the person's data: it stays.
    expect(await p.evaluate(() => localStorage.getItem("context-chat.theme"))).toBe(theme);

    await signIn(p);
    expect(await p.inputValue("#composer")).toBe("");
    await open(p, a);
    expect(await p.inputValue("#composer")).toBe("");
    await open(p, b);
    expect(await p.inputValue("#composer")).toBe("");
    await p.evaluate(() => (location.hash = "#/"));
    await p.waitForSelector("#new-chat-form");
    expect(await storedDrafts(p)).toEqual([]);
  });
});
