// Escape stops a running turn wherever the focus is in the chat, not only in the message box: after
// Send was clicked with the mouse the focus is on Stop, and Escape there still stops the turn
// (saved as interrupted). Escape in a message's Edit box cancels the edit, not the turn.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { signedInTab, turnsSettled } from "./page-waits";
import { api, base, transcript } from "./client";

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
});

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

afterAll(async () => {
  await browser?.close();
});

/** A fresh conversation open in a signed-in tab, its socket up. */
async function openChat(title: string): Promise<{ p: Page; id: string }> {
  const p = await signedInTab(browser, contexts);
  const id = (await api("POST", "/v1/conversations", { title })).json.id;
  await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
  await p.waitForSelector("#socket-status.live", { state: "attached" });
  return { p, id };
}

describe("Escape on a running turn", () => {
  it("stops it after Send was clicked with the mouse (the focus on Stop)", async () => {
    const { p, id } = await openChat("escape after click");
    await p.fill("#composer", "slow one\n@reply-chars 3000\n@stream-pace 100");
    await p.click("#send");
    await p.waitForSelector(".turn.live .md.streaming", { timeout: 60_000 });
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("stop");
    await p.keyboard.press("Escape");
    await turnsSettled(p, 1);
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "interrupted" });
  });

  it("in an Edit box cancels the edit and leaves the running turn going", async () => {
    const { p, id } = await openChat("escape in edit");
    await p.fill("#composer", "first\n@reply-chars 20");
    await p.press("#composer", "Enter");
    await turnsSettled(p, 1);
    await p.fill("#composer", "second\n@reply-chars 600\n@stream-pace 100");
    await p.click("#send");
    await p.waitForSelector(".turn.live .md.streaming", { timeout: 60_000 });
    await p.locator(".turn.done .msg.user button.edit").first().click();
    await p.locator(".edit-box").waitFor();
    await p.locator(".edit-box").press("Escape");
    await p.locator(".edit-box").waitFor({ state: "detached" });
    await turnsSettled(p, 2);
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "end_turn" });
  });
});
