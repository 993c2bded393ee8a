// What the browser tests share on the chat page: its waits, a conversation paused on a client tool,
// a signed-in tab, and a file's browser with a fresh chat open in it.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { chooseChromium, keepSockets } from "./browser";
import { api, base, KEY } from "./client";

/** Waits until no turn streams on the page and at least `n` finished turns are on it. */
export async function turnsSettled(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    (n) =>
      !document.querySelector(".turn.live") &&
      document.querySelectorAll(".turn.done").length >= n &&
      !!document.querySelector("#send:not([hidden])"),
    n,
    { timeout: 60_000 },
  );
}

/** A conversation whose turn paused on the client tool ask_person: its id and the paused turn's answer. */
export async function pausedConversation(title: string) {
  const id = (await api("POST", "/v1/conversations", { title })).json.id;
  const tools = [
    { name: "ask_person", description: "Ask the person", input_schema: { type: "object", properties: {} } },
  ];
  const paused = (await api("POST", `/v1/conversations/${id}/messages`, { content: "@tool ask_person {}", tools }))
    .json;
  expect(paused.stop_reason).toBe("requires_action");
  return { id, paused };
}

/**
 * A signed-in tab of its own (a browser context, as another window would be; kept in `contexts` to
 * be closed), on the new-chat page, its websockets reachable by the test (keepSockets).
 */
export async function signedInTab(
  browser: Browser,
  contexts: BrowserContext[],
  {
    key = KEY,
    viewport = { width: 1280, height: 800 },
  }: { key?: string; viewport?: { width: number; height: number } } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(20_000);
  p.on("pageerror", (err) => console.error("page error:", err));
  await keepSockets(p);
  await p.goto(`${base()}/`, { waitUntil: "domcontentloaded", timeout: 60_000 });
  await p.fill("#api-key", key);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form");
  return p;
}

/**
 * The file's browser (launched before its tests, closed after them) and the contexts a test opens,
 * closed after each test; `openChat` opens a fresh conversation in a signed-in tab, its socket up.
 */
export function browserForFile() {
  let browser: Browser | undefined;
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
  const launched = (): Browser => {
    if (!browser) throw new Error("the browser is launched in beforeAll");
    return browser;
  };
  const openChat = async (title: string): Promise<{ p: Page; id: string }> => {
    const p = await signedInTab(launched(), contexts);
    const id = (await api("POST", "/v1/conversations", { title })).json.id;
    await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    return { p, id };
  };
  return { browser: launched, contexts, openChat };
}
