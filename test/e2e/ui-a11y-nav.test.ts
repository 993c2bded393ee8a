// Keyboard and pointer ways around the shell, in a real browser against the running stack: the
// phone's chats drawer closes from its backdrop and its own close button and keeps Tab inside it;
// a view opened from a link the view replaces takes the focus on its heading (never the top of the
// page); the sidebar's rename form closes on Escape, Cancel and Save with the focus on its Rename.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, base } from "./client";
import { signedInTab } from "./page-waits";

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let browser: Browser;
const contexts: BrowserContext[] = [];
/** A conversation with one exchange, so its History and Search have something to show. */
let chatId = "";

/** A signed-in tab at the given size. */
async function tab(viewport: { width: number; height: number }): Promise<Page> {
  const p = await signedInTab(browser, contexts, { viewport });
  await p.waitForSelector("#conversation-list li", { state: "attached" });
  return p;
}

/** The focused element, described: its tag, id, classes, text and the row (sidebar) it is in. */
const focused = (p: Page) =>
  p.evaluate(() => {
    const el = document.activeElement;
    return {
      tag: el?.tagName ?? "",
      id: el?.id ?? "",
      cls: el?.className ?? "",
      text: (el?.textContent ?? "").trim().slice(0, 60),
      row: (el?.closest("li[data-id]") as HTMLElement | null)?.dataset.id ?? "",
    };
  });

/**
 * Follows a link (or submits a form's field) from the keyboard: focus, then Enter, as a keyboard
 * user would, and waits for the address it goes to (the link's own unless `to` names it).
 */
async function follow(p: Page, selector: string, to?: string) {
  const link = p.locator(selector).first();
  const href = to ?? (await link.getAttribute("href"));
  for (let attempt = 1; ; attempt++) {
    await link.focus();
    await p.keyboard.press("Enter");
    const went = await p
      .waitForFunction((href) => location.hash === href, href, { timeout: 5_000 })
      .then(() => true)
      .catch(() => false);
    if (went || attempt === 2) return;
    // Seen twice under load, not explained: the Enter did not reach the link. Where the focus was
    // is logged for the next look; the press is tried once more (the view's focus is what is checked).
    console.warn(`follow ${selector}: no navigation after Enter; the focus is on`, await focused(p));
  }
}

/** Waits until the view has loaded and (up to 10 s) the focus is on a heading, then says where the focus is. */
async function focusAfterOpening(p: Page, heading: string) {
  await p.waitForFunction((heading) => document.querySelector("#view h1")?.textContent?.startsWith(heading), heading);
  await expect.poll(async () => (await focused(p)).tag, { timeout: 10_000 }).toBe("H1");
  return focused(p);
}

beforeAll(async () => {
  chatId = (await api("POST", "/v1/conversations", { title: "Focus walk" })).json.id;
  await api("POST", `/v1/conversations/${chatId}/messages`, { content: "a plan for the focus walk" });
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
});

describe("the phone's chats drawer", () => {
  /** Opens the drawer from ☰ and waits until it is on screen. */
  async function openDrawer(p: Page) {
    await p.click("#sidebar-toggle");
    await p.waitForSelector("#new-chat", { state: "visible" });
    expect(await p.evaluate(() => document.body.classList.contains("sidebar-open"))).toBe(true);
  }
  const isOpen = (p: Page) => p.evaluate(() => document.body.classList.contains("sidebar-open"));

  it("a tap on the dimmed page beside the open drawer closes it, and the focus goes back to ☰", async () => {
    const p = await tab(PHONE);
    await openDrawer(p);
    await p.mouse.click(370, 500);
    await expect.poll(() => isOpen(p), { timeout: 3_000 }).toBe(false);
    expect((await focused(p)).id).toBe("sidebar-toggle");
    // The page behind is usable again.
    expect(await p.evaluate(() => document.getElementById("view")?.inert)).toBe(false);
  });

  it("the open drawer has a visible close button of its own that closes it from the keyboard", async () => {
    const p = await tab(PHONE);
    await openDrawer(p);
    const close = p.locator("#sidebar #sidebar-close");
    expect(await close.isVisible()).toBe(true);
    expect(await close.getAttribute("aria-label")).toBe("Close chats");
    // Nothing covers it: a tap on it lands on it.
    const hit = () =>
      p.evaluate(() => {
        const r = document.getElementById("sidebar-close")!.getBoundingClientRect();
        return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.id;
      });
    // (once the drawer has slid in)
    await expect.poll(hit, { timeout: 3_000 }).toBe("sidebar-close");
    await close.focus();
    await p.keyboard.press("Enter");
    await expect.poll(() => isOpen(p), { timeout: 3_000 }).toBe(false);
    expect((await focused(p)).id).toBe("sidebar-toggle");
  });

  it("Tab and Shift+Tab in the open drawer reach only the drawer's own controls, never one under it", async () => {
    const p = await tab(PHONE);
    await openDrawer(p);
    const outside: string[] = [];
    for (const key of ["Tab", "Shift+Tab"]) {
      await p.locator("#new-chat").focus();
      for (let i = 0; i < 30; i++) {
        await p.keyboard.press(key);
        const where = await p.evaluate(() => {
          const el = document.activeElement;
          if (!el || el === document.body || document.getElementById("sidebar")?.contains(el)) return "";
          return `${el.tagName}#${el.id}.${el.className}`;
        });
        if (where) outside.push(`${key}: ${where}`);
      }
    }
    expect([...new Set(outside)]).toEqual([]);
    // Escape still closes it.
    await p.keyboard.press("Escape");
    await expect.poll(() => isOpen(p), { timeout: 3_000 }).toBe(false);
  });
});

describe("a view opened from a link takes the focus on its heading", () => {
  let p: Page;
  beforeAll(async () => {
    p = await tab(DESKTOP);
  });

  /** Opens the chat and waits until its head's links are there and its socket is open (the view has loaded). */
  async function openChat() {
    await p.goto(`${base()}/#/c/${chatId}`);
    await p.waitForSelector(`.chat-head a[href="#/c/${chatId}/settings"]`);
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    await p.waitForLoadState("networkidle");
  }

  it("Settings from the chat head: the focus is on the heading Chat settings, not the top of the page", async () => {
    await openChat();
    await follow(p, `.chat-head a[href="#/c/${chatId}/settings"]`);
    const f = await focusAfterOpening(p, "Chat settings");
    expect(f.tag).toBe("H1");
    expect(f.text).toBe("Chat settings");
    // Tab goes on into the view.
    await p.keyboard.press("Tab");
    expect(await p.evaluate(() => !!document.getElementById("view")?.contains(document.activeElement))).toBe(true);
  });

  it("History from the chat head: the focus is on the heading History", async () => {
    await openChat();
    await follow(p, `.chat-head a[href="#/c/${chatId}/history"]`);
    const f = await focusAfterOpening(p, "History");
    expect(f.tag).toBe("H1");
    expect(f.text).toBe("History: Focus walk");
  });

  it("Search from the header's box: the focus is on the results' heading, so Tab goes on to the results", async () => {
    await openChat();
    await p.locator("#search-q").fill("plan");
    await follow(p, "#search-q", "#/search?q=plan");
    const f = await focusAfterOpening(p, "Search: plan");
    expect(f.tag).toBe("H1");
    expect(f.text).toBe("Search: plan");
  });

  it("a search hit opens History with the focus on its heading", async () => {
    await p.goto(`${base()}/#/search?q=plan`);
    await p.waitForSelector(`#search-results a[href^="#/c/${chatId}/history"]`);
    await follow(p, `#search-results a[href^="#/c/${chatId}/history"]`);
    const f = await focusAfterOpening(p, "History");
    expect(f.tag).toBe("H1");
    expect(f.text).toBe("History: Focus walk");
  });

  it("All chats from the sidebar: the focus is on the heading All chats", async () => {
    await openChat();
    await follow(p, '#sidebar a[href="#/manage"]');
    const f = await focusAfterOpening(p, "All chats");
    expect(f.tag).toBe("H1");
    expect(f.text).toBe("All chats");
  });

  it("a page opened by its address (the first load) leaves the focus where the browser put it", async () => {
    await p.goto(`${base()}/#/c/${chatId}/settings`);
    await p.reload();
    await p.waitForFunction(() => document.querySelector("#view h1")?.textContent === "Chat settings");
    await p.waitForLoadState("networkidle");
    await p.waitForTimeout(1_000);
    expect((await focused(p)).tag).toBe("BODY");
  });
});

describe("the sidebar's rename form gives the focus back to Rename", () => {
  let p: Page;
  const ids: string[] = [];
  beforeAll(async () => {
    for (const title of ["Rename escape", "Rename cancel", "Rename save"])
      ids.push((await api("POST", "/v1/conversations", { title })).json.id);
    p = await tab(DESKTOP);
    await p.waitForSelector(`#conversation-list li[data-id="${ids[2]}"]`);
  });

  /** Opens the row's rename form from the keyboard and types a new name in it. */
  async function startRename(id: string, typed: string) {
    await p.locator(`#conversation-list li[data-id="${id}"] button.rename`).focus();
    await p.keyboard.press("Enter");
    await p.waitForSelector(`#conversation-list li[data-id="${id}"] input.rename-input`);
    expect((await focused(p)).cls).toContain("rename-input");
    await p.keyboard.press("End");
    await p.keyboard.type(typed);
  }
  const linkText = (id: string) => p.locator(`#conversation-list li[data-id="${id}"] .conv-link`).textContent();

  it("Escape cancels the rename: the old name stays, and the focus is on the row's Rename", async () => {
    await startRename(ids[0], "not this");
    await p.keyboard.press("Escape");
    await p.waitForTimeout(200);
    expect(await p.locator(`#conversation-list li[data-id="${ids[0]}"] .rename-form`).count()).toBe(0);
    expect(await linkText(ids[0])).toBe("Rename escape");
    const f = await focused(p);
    expect(f.row).toBe(ids[0]);
    expect(f.cls).toContain("rename");
    expect((await api("GET", `/v1/conversations/${ids[0]}`)).json.title).toBe("Rename escape");
  });

  it("Cancel closes the form with the focus on the row's Rename", async () => {
    await startRename(ids[1], "not this either");
    await p.keyboard.press("Tab"); // Save
    await p.keyboard.press("Tab"); // Cancel
    expect((await focused(p)).text).toBe("Cancel");
    await p.keyboard.press("Enter");
    await p.waitForTimeout(200);
    expect(await linkText(ids[1])).toBe("Rename cancel");
    const f = await focused(p);
    expect(f.row).toBe(ids[1]);
    expect(f.cls).toContain("rename");
  });

  it("Save renames the chat with the focus on the row's Rename, also once the list is drawn again", async () => {
    await startRename(ids[2], " renamed");
    await p.keyboard.press("Enter");
    await expect.poll(() => linkText(ids[2])).toBe("Rename save renamed");
    // The save reloads the list (conversations-changed): the focus stays on the same row's Rename.
    await p.waitForLoadState("networkidle");
    await p.waitForTimeout(500);
    const f = await focused(p);
    expect(f.row).toBe(ids[2]);
    expect(f.cls).toContain("rename");
    expect((await api("GET", `/v1/conversations/${ids[2]}`)).json.title).toBe("Rename save renamed");
  });
});
