// The web UI in Chromium: sign-out leaves nothing of the session on the sign-in page (the tab's
// title, the search box, the sidebar's chats, which another tenant's sign-in in the same tab would
// otherwise see while its own listing loads, or for good when that fails); Settings, History and
// Replay name themselves in the tab's title; Edit-and-resend of an earlier prompt sends no file
// staged in the composer (they stay for the composer's Send); a long tool name stays inside the
// transcript on a phone.
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { ADMIN, api, base, client, KEY } from "./client";
import { turnsSettled } from "./page-waits";

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

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

async function tab(viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(30_000);
  p.on("pageerror", (err) => console.error("page error:", err));
  await p.goto(`${base()}/`, { waitUntil: "domcontentloaded", timeout: 60_000 });
  await signIn(p, KEY);
  return p;
}
async function signIn(p: Page, key: string) {
  await p.fill("#api-key", key);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form", { timeout: 60_000 });
}
const go = (p: Page, hash: string) => p.evaluate((h) => (location.hash = h), hash);
async function open(p: Page, id: string, n = 0) {
  await go(p, `#/c/${id}`);
  await p.waitForSelector("#chat .settled > *");
  if (n) await turnsSettled(p, n);
}
/** The view's heading once it reads `text`, then the tab's title. */
async function titleOnceShown(p: Page, heading: string): Promise<string> {
  await p.waitForFunction((t) => document.querySelector("#view h1")?.textContent?.startsWith(t), heading);
  return p.title();
}
const sidebarTitles = (p: Page) =>
  p.$$eval("#conversation-list .conv-link", (links) => links.map((a) => a.textContent ?? ""));

describe("web UI: sign-out, edit with staged files, narrow tool names", () => {
  it("Settings, History and Replay title the tab; sign-out clears the title, the search box and the chats", async () => {
    const title = `Secret merger plans ${Date.now()}`;
    const id = (await api("POST", "/v1/conversations", { title })).json.id as string;
    await api("POST", `/v1/conversations/${id}/messages`, { content: "hello" });
    const p = await tab();
    await p.fill("#search-q", "layoffs list");
    await p.press("#search-q", "Enter");
    await p.waitForSelector("#search-status");
    await open(p, id, 1);
    await p.waitForFunction((t) => document.getElementById("chat-title")?.textContent === t, title);
    expect(await p.title()).toBe(`${title} · context-chat`);

    await go(p, `#/c/${id}/settings`);
    await p.waitForSelector("#set-title");
    expect(await p.title()).toBe(`Settings · ${title} · context-chat`);
    await go(p, `#/c/${id}/history`);
    expect(await titleOnceShown(p, `History: ${title}`)).toBe(`History · ${title} · context-chat`);
    await go(p, `#/c/${id}/replay`);
    expect(await titleOnceShown(p, `Next request: ${title}`)).toBe(`Replay · ${title} · context-chat`);

    await p.waitForFunction(
      (t) => [...document.querySelectorAll("#conversation-list .conv-link")].some((a) => a.textContent === t),
      title,
    );
    await p.click("#sign-out");
    await p.waitForSelector("#signin-form");
    expect(await p.title()).toBe("Sign in · context-chat");
    expect(await p.inputValue("#search-q")).toBe("");
    expect(await sidebarTitles(p)).toEqual([]);

    // Another tenant signs in on the same tab; its listing is slow, then fails.
    const other = await client(ADMIN).request("POST /v1/admin/tenants", { body: { name: `signout-${Date.now()}` } });
    await p.route("**/v1/conversations?order=activity*", async (route) => {
      await new Promise((r) => setTimeout(r, 1000));
      await route.abort();
    });
    await signIn(p, other.data.apiKey);
    expect(await sidebarTitles(p)).toEqual([]);
    await p.waitForFunction(() => !!document.querySelector(".sidebar-status")?.textContent);
    expect(await sidebarTitles(p)).toEqual([]);
    expect(await p.inputValue("#search-q")).toBe("");
  });

  it("Edit and resend sends no file staged in the composer; the composer's Send does", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "edit with staged" })).json.id as string;
    await api("POST", `/v1/conversations/${id}/messages`, { content: "first question" });
    const p = await tab();
    const frames: Record<string, unknown>[] = [];
    p.on("websocket", (ws) =>
      ws.on("framesent", (f) => {
        try {
          const d = JSON.parse(String(f.payload));
          if (d.type === "send") frames.push(d);
        } catch {}
      }),
    );
    await open(p, id, 1);
    await p.fill("#composer", "please read the attached report");
    await p.setInputFiles("#file-input", {
      name: "report.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("quarterly numbers"),
    });
    await p.waitForSelector(".upload.staged");
    await p.click(".msg.user button.edit");
    await p.fill(".edit-box", "first question, reworded");
    await p.click(".editor .resend");
    await turnsSettled(p, 2);
    expect(frames).toHaveLength(1);
    expect(frames[0]?.content).toBe("first question, reworded");
    expect(frames[0]?.attachments).toBeUndefined();
    expect(await p.locator(".upload.staged").count()).toBe(1);
    expect(await p.inputValue("#composer")).toBe("please read the attached report");

    await p.click("#send");
    await turnsSettled(p, 3);
    expect(frames[1]?.content).toBe("please read the attached report");
    expect(frames[1]?.attachments).toHaveLength(1);
    expect(await p.locator(".upload.staged").count()).toBe(0);
  });

  it("a 63-character tool name stays inside the transcript at 390 px", async () => {
    const name = "get_current_weather_forecast_for_location_with_extended_details";
    expect(name).toHaveLength(63);
    const id = (await api("POST", "/v1/conversations", { title: "long tool name" })).json.id as string;
    const tools = [{ name, description: "weather", input_schema: { type: "object", properties: {} } }];
    const paused = await api("POST", `/v1/conversations/${id}/messages`, { content: `@tool ${name} {}`, tools });
    expect(paused.json.stop_reason).toBe("requires_action");
    const p = await tab(PHONE);
    await open(p, id);
    await p.waitForSelector("#pending-calls legend");
    const m = await p.evaluate(() => {
      const log = document.getElementById("log") as HTMLElement;
      const right = (sel: string) => document.querySelector(sel)?.getBoundingClientRect().right ?? null;
      return {
        docScroll: document.documentElement.scrollWidth,
        logScroll: log.scrollWidth,
        logClient: log.clientWidth,
        stepRight: right(".tool-step summary"),
        legendRight: right("#pending-calls legend"),
      };
    });
    expect(m.stepRight).not.toBeNull();
    expect(m.docScroll).toBeLessThanOrEqual(PHONE.width);
    expect(m.logScroll).toBeLessThanOrEqual(m.logClient);
    expect(m.stepRight).toBeLessThanOrEqual(PHONE.width);
    expect(m.legendRight).toBeLessThanOrEqual(PHONE.width);
  });
});
