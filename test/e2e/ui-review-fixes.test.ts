// Faults a review of the web UI found, each in a real browser against the running stack: a staged
// file with a long name keeps Send and its ✕ on the screen, Settings saved with a model the picker
// does not list sends only what changed, a chat deleted elsewhere stops reconnecting and says so,
// Regenerate is offered only on a last turn with a reply (Retry otherwise), Regenerate works on an
// image-only prompt, Search pages past its first 50 hits, and the sidebar picks up activity from
// other clients when the tab comes back into view.
import { chromium, type Browser, type BrowserContext, type Page, type Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, base, KEY, newConversation, transcript } from "./client";
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
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/**
 * A signed-in tab of its own on the new-chat page (as signedInTab, with more time for the sign-in:
 * on a busy machine it has taken over 20 s).
 */
async function tab(viewport = DESKTOP): Promise<Page> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const p = await context.newPage();
  p.setDefaultTimeout(30_000);
  p.on("pageerror", (err) => console.error("page error:", err));
  await p.goto(`${base()}/`, { waitUntil: "domcontentloaded", timeout: 60_000 });
  await p.fill("#api-key", KEY);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form", { timeout: 60_000 });
  return p;
}

/** Opens a conversation's chat and waits for its `n` turns. */
async function open(p: Page, id: string, n = 0) {
  await p.evaluate((h) => (location.hash = h), `#/c/${id}`);
  // The chat's transcript drawn (its empty-chat line or its turns): the composer's handlers are on by then.
  await p.waitForSelector("#chat .settled > *");
  if (n) await turnsSettled(p, n);
}

/** Sends a message from the composer. */
async function send(p: Page, text: string) {
  await p.fill("#composer", text);
  await p.press("#composer", "Enter");
}

/** The `send` frames the page's sockets carried. */
function sentFrames(p: Page): Record<string, unknown>[] {
  const frames: Record<string, unknown>[] = [];
  p.on("websocket", (ws) =>
    ws.on("framesent", (f) => {
      try {
        const data = JSON.parse(String(f.payload));
        if (data.type === "send") frames.push(data);
      } catch {}
    }),
  );
  return frames;
}

describe("UI review fixes", () => {
  for (const [viewport, name] of [
    [PHONE, "quarterly-report-final-version-2026-12-06-reviewed-by-legal.txt"],
    [DESKTOP, `${"a-very-long-file-name-".repeat(8)}end.txt`.slice(-190)],
  ] as const)
    it(`a staged file with a long name keeps Send and its ✕ on the screen at ${viewport.width} px`, async () => {
      const id = await newConversation();
      const p = await tab(viewport);
      await open(p, id);
      await p.setInputFiles("#file-input", { name, mimeType: "text/plain", buffer: Buffer.from("hello") });
      await p.waitForSelector(".upload.staged");
      const right = (sel: string) =>
        p.evaluate((sel) => document.querySelector(sel)!.getBoundingClientRect().right, sel);
      const chat = await right("#chat");
      expect(chat).toBeLessThanOrEqual(viewport.width);
      expect(await right("#send")).toBeLessThanOrEqual(chat);
      expect(await right(".upload.staged .remove")).toBeLessThanOrEqual(chat);
      // The name is cut with an ellipsis, not wrapped or overflowing the page.
      const fileName = await p.evaluate(() => {
        const el = document.querySelector(".upload.staged .file-name")!;
        return { scroll: el.scrollWidth, client: el.clientWidth };
      });
      expect(fileName.scroll).toBeGreaterThan(fileName.client);
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    });

  it("Save with a model the picker does not list sends only the title, and shows the model as current", async () => {
    const id = await newConversation({ model: "offline-64k" });
    const p = await tab();
    await p.evaluate((h) => (location.hash = h), `#/c/${id}/settings`);
    await p.waitForSelector("#settings-form");
    expect(await p.inputValue("#set-model")).toBe("offline-64k");
    expect(await p.locator("#set-model option:checked").textContent()).toContain("(current)");
    await p.fill("#set-title", "Renamed only");
    const patch = (r: Request) => r.method() === "PATCH" && /\/v1\/conversations\/conv_/.test(r.url());
    const [req] = await Promise.all([
      p.waitForRequest(patch),
      p.waitForResponse((r) => patch(r.request())),
      p.click("#settings-form button[type=submit]"),
    ]);
    expect(JSON.parse(req.postData() ?? "{}")).toEqual({ title: "Renamed only" });
    const meta = (await api("GET", `/v1/conversations/${id}`)).json as unknown as { settings: { model: string } };
    expect(meta.settings.model).toBe("offline-64k");
  });

  it("a chat deleted elsewhere stops reconnecting, says it no longer exists and offers a new chat", async () => {
    const id = await newConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "hello\n@reply-chars 20" });
    const p = await tab();
    await open(p, id, 1);
    let tickets = 0;
    p.on("request", (r) => {
      if (r.url().includes(`/v1/conversations/${id}/ws-ticket`)) tickets++;
    });
    expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBeLessThan(300);
    await p.getByText("This conversation no longer exists.").waitFor({ timeout: 10_000 });
    expect(await p.locator("a[href='#/']", { hasText: "Start a new chat" }).count()).toBe(1);
    expect(await p.locator("#conn-banner:not([hidden])").count()).toBe(0);
    await expect.poll(() => p.locator(`#conversation-list li[data-id="${id}"]`).count(), { timeout: 5000 }).toBe(0);
    const asked = tickets;
    await p.waitForTimeout(3500);
    expect(tickets).toBe(asked);
    expect(asked).toBeLessThanOrEqual(1);
  });

  it("after a failed turn, Retry (not Regenerate) is offered on it, and resends its prompt", async () => {
    const id = await newConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "first question\n@reply-chars 40" });
    const p = await tab();
    const frames = sentFrames(p);
    await open(p, id, 1);
    await send(p, "second question\n@model-error 400");
    await p.waitForSelector(".turn-error");
    await turnsSettled(p, 2);
    expect(await p.locator("#regenerate").count()).toBe(0);
    const retry = p.locator(".turn.done").last().locator("button.retry");
    expect(await retry.count()).toBe(1);
    await retry.click();
    await expect.poll(() => frames.length, { timeout: 10_000 }).toBe(2);
    expect(frames[1]).toMatchObject({ content: "second question\n@model-error 400" });
    expect(frames[1].regenerate).toBeUndefined();
  });

  it("a turn stopped before its first token shows Stopped with Retry, not Regenerate", async () => {
    const id = await newConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: "first question\n@reply-chars 40" });
    const p = await tab();
    await open(p, id, 1);
    await send(p, "second question\n@hold-stream after=0");
    await p.waitForSelector("#stop:not([hidden])");
    await p.waitForFunction(() => !!document.querySelector(".turn.live[data-turn]"));
    await p.click("#stop");
    await turnsSettled(p, 2);
    const last = p.locator(".turn.done").last();
    expect(await last.locator(".msg.user .text").textContent()).toBe("second question\n@hold-stream after=0");
    expect(await p.locator("#regenerate").count()).toBe(0);
    expect(await last.locator(".stopped-note").count()).toBe(1);
    expect(await last.locator("button.retry").count()).toBe(1);
    // Drawn again from the server (a reload), it is the same.
    await p.reload();
    await p.waitForSelector("#composer");
    await turnsSettled(p, 2);
    expect(await p.locator("#regenerate").count()).toBe(0);
    expect(await p.locator(".turn.done").last().locator(".stopped-note").count()).toBe(1);
    expect(await p.locator(".turn.done").last().locator("button.retry").count()).toBe(1);
  });

  it("Regenerate on a prompt made only of an image runs it again", async () => {
    const imported = await api("POST", "/v1/conversations/import?title=Pixel", {
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] },
        { role: "assistant", content: "A single pixel." },
      ],
    });
    expect(imported.status).toBe(201);
    const id = imported.json.id as string;
    const p = await tab();
    const frames = sentFrames(p);
    await open(p, id, 1);
    // What the waiting turn showed as its prompt (it may be gone again by the time a look is taken).
    await p.evaluate(() => {
      const seen: string[] = [];
      Object.assign(window, { seen });
      new MutationObserver(() => {
        const text = document.querySelector(".turn.live .msg.user .text")?.textContent;
        if (text !== undefined && text !== null) seen.push(text);
      }).observe(document.getElementById("log")!, { childList: true, subtree: true });
    });
    await p.click("#regenerate");
    await expect.poll(() => frames.length, { timeout: 10_000 }).toBe(1);
    expect(frames[0]).toMatchObject({ regenerate: true });
    expect(await p.evaluate(() => (window as unknown as { seen: string[] }).seen[0])).toBe("[image]");
    await expect
      .poll(async () => (await transcript(id)).filter((m) => m.role === "assistant").length, { timeout: 60_000 })
      .toBe(2);
    await turnsSettled(p, 1);
    expect(await p.locator(".version-count").textContent()).toBe("2 / 2");
  });

  it("Search says there are more than 50 matches and loads the next page", async () => {
    const p = await tab();
    const word = `zorblax${Date.now()}`;
    const messages = Array.from({ length: 70 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `${word} line number ${i}`,
    }));
    const imported = await api("POST", "/v1/conversations/import?title=Many%20hits", { messages });
    expect(imported.status).toBe(201);
    await expect
      .poll(async () => ((await api("GET", `/v1/search?q=${word}&limit=100`)).json.data as unknown[]).length, {
        timeout: 60_000,
      })
      .toBeGreaterThan(55);
    await p.evaluate((h) => (location.hash = h), `#/search?q=${word}`);
    await p.waitForFunction(() => /match/.test(document.getElementById("search-status")?.textContent ?? ""));
    expect(await p.textContent("#search-status")).toBe("50+ matches");
    expect(await p.locator("#search-results > li").count()).toBe(50);
    await p.click("#search-more");
    await expect.poll(() => p.locator("#search-results > li").count(), { timeout: 15_000 }).toBeGreaterThan(55);
    expect(await p.textContent("#search-status")).toMatch(/^\d+ matches$/);
    expect(await p.locator("#search-more:not([hidden])").count()).toBe(0);
  });

  it("the sidebar reorders on activity from another client when the tab comes back into view", async () => {
    const older = await newConversation();
    const newer = await newConversation();
    const p = await tab();
    const first = () => p.evaluate(() => document.querySelector("#conversation-list li")?.getAttribute("data-id"));
    await expect.poll(first, { timeout: 15_000 }).toBe(newer);
    await api("POST", `/v1/conversations/${older}/messages`, { content: "wake up\n@reply-chars 10" });
    await expect
      .poll(
        async () => {
          const page = (await api("GET", "/v1/conversations?order=activity&limit=1")).json;
          return (page.data as { id: string }[])[0]?.id;
        },
        { timeout: 30_000 },
      )
      .toBe(older);
    await p.waitForTimeout(500);
    expect(await first()).toBe(newer);
    await p.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
    await expect.poll(first, { timeout: 5000 }).toBe(older);
  });
});
