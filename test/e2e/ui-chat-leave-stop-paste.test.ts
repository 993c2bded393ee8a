// The chat page's edges, in a real browser against the running stack: a chat left before its
// socket opened keeps no socket (nor its title), Stop on a message queued behind another tab's turn
// cancels it at once, a reader scrolled up in a long reply stays there when it ends, an image pasted
// into the composer is staged, Escape while an input method composes does not stop the turn, and a
// new chat's first message that could not be sent goes back into the composer.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { signedInTab, turnsSettled } from "./page-waits";
import { api, base, transcript } from "./client";

let browser: Browser;
const contexts: BrowserContext[] = [];

const tab = (viewport?: { width: number; height: number }): Promise<Page> =>
  signedInTab(browser, contexts, viewport ? { viewport } : {});

/** Opens a conversation in a tab and waits for its socket. */
async function open(p: Page, id: string) {
  await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
  await p.waitForSelector("#socket-status.live", { state: "attached" });
}

const newId = async (title: string): Promise<string> => (await api("POST", "/v1/conversations", { title })).json.id;

/** Sends from the tab's composer and waits until its turn streams. */
async function sendStreaming(p: Page, text: string) {
  await p.fill("#composer", text);
  await p.press("#composer", "Enter");
  await p.waitForSelector(".turn.live .md.streaming", { state: "attached", timeout: 30_000 });
}

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  // The stack's first turn is slow (a cold worker): taken here, not inside a test's waits.
  const id = await newId("warm-up");
  await api("POST", `/v1/conversations/${id}/messages`, { content: "warm up\n@reply-chars 20" });
});

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await browser?.close();
});

describe("the chat page's edges", () => {
  it("a chat left before its socket opened keeps no socket: a rename of it does not retitle the chat shown now", async () => {
    const p = await tab();
    const [x, y] = [await newId("X left early"), await newId("Y shown")];
    await p.evaluate((x) => (location.hash = `#/c/${x}`), x);
    await p.waitForSelector("#chat", { state: "attached" });
    await p.evaluate((y) => (location.hash = `#/c/${y}`), y);
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    await expect.poll(() => p.title()).toBe("Y shown · context-chat");
    // Whatever X's socket was doing, it has had time to open by now.
    await p.waitForTimeout(1_000);
    await api("PATCH", `/v1/conversations/${x}`, { title: "X renamed elsewhere" });
    await p.waitForTimeout(1_000);
    expect(await p.title()).toBe("Y shown · context-chat");
    expect(await p.evaluate(() => window.sockets.filter((s) => s.readyState === WebSocket.OPEN).length)).toBe(1);
  });

  it("Stop on a message queued behind another tab's turn cancels it at once: nothing of it is saved, the message goes back into the composer", async () => {
    const [a, b] = [await tab(), await tab()];
    const id = await newId("queued stop");
    await open(a, id);
    await open(b, id);
    await sendStreaming(a, "first, slow\n@reply-chars 1200\n@stream-pace 250");
    const question = "second question from tab B";
    await b.fill("#composer", question);
    await b.press("#composer", "Enter");
    await b.waitForTimeout(800);
    await b.click("#stop");
    // Cancelled at once, not once A's turn has ended and B's has started.
    await b.waitForSelector("#send:not([hidden])", { timeout: 3_000 });
    expect(await b.inputValue("#composer")).toBe(question);
    // Only A's turn streams in B now: B's own section is gone.
    expect(await b.locator(".turn.live[data-ref]").count()).toBe(0);
    await turnsSettled(a, 1);
    await a.waitForTimeout(500);
    const saved = await transcript(id);
    expect(saved.filter((m) => m.role === "user")).toHaveLength(1);
    expect(JSON.stringify(saved)).not.toContain(question);
  });

  it("a reader scrolled up to the start of a long streaming reply stays there when it ends", async () => {
    const p = await tab({ width: 1280, height: 600 });
    await open(p, await newId("long reply"));
    await sendStreaming(p, "long please\n@reply-chars 6000\n@stream-pace 40");
    await p.waitForFunction(
      () => {
        const log = document.getElementById("log")!;
        return log.scrollHeight > log.clientHeight * 2.5;
      },
      null,
      { timeout: 60_000 },
    );
    const top = await p.evaluate(() => {
      const log = document.getElementById("log")!;
      const reply = document.querySelector(".turn.live .msg.assistant")!;
      log.scrollTop += reply.getBoundingClientRect().top - log.getBoundingClientRect().top;
      return log.scrollTop;
    });
    await turnsSettled(p, 1);
    await p.waitForTimeout(300);
    const after = await p.evaluate(() => {
      const log = document.getElementById("log")!;
      return { top: log.scrollTop, bottom: log.scrollHeight - log.clientHeight };
    });
    expect(after.bottom - after.top).toBeGreaterThan(600);
    expect(Math.abs(after.top - top)).toBeLessThan(100);
  });

  it("an image pasted into the composer is staged as a chip, as a dropped one is", async () => {
    const p = await tab();
    await open(p, await newId("paste"));
    await p.evaluate(() => {
      const data = new DataTransfer();
      data.items.add(new File([new Uint8Array([137, 80, 78, 71])], "pasted.png", { type: "image/png" }));
      const event = new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true });
      document.getElementById("composer")!.dispatchEvent(event);
    });
    await p.locator(".file-chip", { hasText: "pasted.png" }).waitFor({ timeout: 3_000 });
  });

  it("Escape while an input method composes does not stop the running turn", async () => {
    const p = await tab();
    const id = await newId("ime escape");
    await open(p, id);
    await sendStreaming(p, "ime\n@reply-chars 300\n@stream-pace 100");
    await p.evaluate(() =>
      document
        .getElementById("composer")!
        .dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", isComposing: true, bubbles: true })),
    );
    expect(await p.textContent("#stop")).toBe("Stop");
    await turnsSettled(p, 1);
    const reply = (await transcript(id)).find((m) => m.role === "assistant");
    expect(reply?.stopReason).not.toBe("interrupted");
  });

  it("a new chat's first message that could not be sent goes back into the composer, and is kept as the draft", async () => {
    const p = await tab();
    await p.route("**/ws-ticket", (r) => r.abort());
    const first = "my first question, not to be lost";
    await p.fill("#composer", first);
    await p.press("#composer", "Enter");
    await p.waitForURL(/#\/c\/conv_/);
    await p.locator(".turn-error").waitFor();
    expect(await p.inputValue("#composer")).toBe(first);
    // Left and opened again (the socket reachable now): the draft holds it.
    await p.unroute("**/ws-ticket");
    const id = /#\/c\/(conv_[^/?]+)/.exec(p.url())![1];
    await p.goto(`${base()}/#/`, { waitUntil: "domcontentloaded" });
    await p.waitForSelector("#new-chat-form");
    await open(p, id);
    await expect.poll(() => p.inputValue("#composer")).toBe(first);
  });
});
