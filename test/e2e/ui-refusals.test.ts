// The chat when the server refuses what the page sent, in a real browser against the running stack:
// a message refused at validation (too long, too many files) leaves the page idle with the message
// and its files back in the composer; a new chat's first message survives its key being refused;
// and answering a client tool's panel by keyboard leaves the focus in the composer.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { pausedConversation, signedInTab } from "./page-waits";
import { api, base, KEY, transcript } from "./client";

let browser: Browser;
const contexts: BrowserContext[] = [];

/** A tab of its own, signed in with `key`, on the new-chat page. */
function tab(key = KEY): Promise<Page> {
  return signedInTab(browser, contexts, { key });
}

/** A fresh conversation open in the tab, its socket up. */
async function freshChat(p: Page, title: string): Promise<string> {
  const id = (await api("POST", "/v1/conversations", { title })).json.id;
  await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
  await p.waitForSelector("#socket-status.live", { state: "attached" });
  return id;
}

/** Waits until the page is idle again: Send offered, Stop gone, no turn waiting. */
const idle = (p: Page) =>
  p.waitForFunction(
    () =>
      !!document.querySelector("#send:not([hidden])") &&
      !!document.querySelector("#stop[hidden]") &&
      !document.querySelector(".turn.live"),
    undefined,
    { timeout: 20_000 },
  );

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

describe("a send the server refuses at validation", () => {
  it("a message over the length limit: the page is idle again, the message is back in the box, and the refusal is announced", async () => {
    const p = await tab();
    const id = await freshChat(p, "too long");
    const long = "y".repeat(1_000_001);
    // Set in one go (typing a million characters would take minutes), then sent with Enter.
    await p.evaluate((value) => {
      const box = document.querySelector<HTMLTextAreaElement>("#composer")!;
      box.value = value;
      box.dispatchEvent(new Event("input"));
    }, long);
    await p.press("#composer", "Enter");
    await idle(p);
    expect(await p.inputValue("#composer")).toBe(long);
    await expect.poll(() => p.locator("#announcer").textContent()).toMatch(/back in the box/);
    expect(await p.locator(".turn-error").last().textContent()).toBeTruthy();
    expect(await transcript(id)).toEqual([]);
    // The page works on: a message within the limit is sent.
    await p.fill("#composer", "short now");
    await p.press("#composer", "Enter");
    await p.waitForSelector(".turn.done", { timeout: 60_000 });
    await idle(p);
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a message with more files than a send may carry: idle again, the message and every file back (uploaded once)", async () => {
    const p = await tab();
    const id = await freshChat(p, "too many files");
    const files = Array.from({ length: 21 }, (_, i) => ({
      name: `note-${i}.txt`,
      mimeType: "text/plain",
      buffer: Buffer.from(`note ${i}\n`),
    }));
    await p.setInputFiles("#file-input", files);
    expect(await p.locator("#uploads .file-chip.staged").count()).toBe(21);
    await p.fill("#composer", "read all of these");
    await p.press("#composer", "Enter");
    await idle(p);
    expect(await p.inputValue("#composer")).toBe("read all of these");
    expect(await p.locator("#uploads .file-chip.staged").count()).toBe(21);
    await expect.poll(() => p.locator("#announcer").textContent()).toMatch(/back in the box/);
    expect(await transcript(id)).toEqual([]);
    const listed = await api("GET", `/v1/conversations/${id}/attachments?limit=100`);
    expect(listed.json.data).toHaveLength(21);
  });
});

describe("the new-chat page", () => {
  it("a first message being sent when the key is refused waits in the new-chat composer through the sign-in", async () => {
    const created = await api("POST", "/v1/keys", { name: "new chat draft test" });
    const p = await tab(created.json.apiKey);
    expect((await api("DELETE", `/v1/keys/${created.json.key.id}`)).status).toBe(200);
    await p.fill("#composer", "A first question I took a while to write.");
    await p.press("#composer", "Enter");
    await p.waitForSelector("#signin-form");
    await p.fill("#api-key", KEY);
    await p.click("#signin-form button[type=submit]");
    await p.waitForSelector("#new-chat-form");
    await expect.poll(() => p.inputValue("#composer")).toBe("A first question I took a while to write.");
    // Taken once: the next visit starts empty.
    await p.goto(`${base()}/#/manage`);
    await p.waitForSelector("#conversations");
    await p.goto(`${base()}/#/`);
    await p.waitForSelector("#new-chat-form");
    expect(await p.inputValue("#composer")).toBe("");
  });
});

describe("a client tool's panel", () => {
  it("answered by keyboard, leaves the focus in the composer when it goes", async () => {
    const p = await tab();
    const { id, paused } = await pausedConversation("panel focus");
    await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
    await p.locator("#pending-calls").waitFor();
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    const callId = paused.requires_action!.calls[0].id;
    await p.fill(`#pending-calls [data-answer="${callId}"]`, "by keyboard");
    await p.focus("#send-results");
    await p.keyboard.press("Enter");
    await p.waitForSelector("#pending-calls", { state: "detached", timeout: 60_000 });
    await p.waitForFunction(() => !document.querySelector(".turn.live"), undefined, { timeout: 60_000 });
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("composer");
  });
});
