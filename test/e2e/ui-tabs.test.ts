// The chat when more than one place acts on a conversation, in a real browser against the running
// stack: a turn sent from another tab shows its question here as soon as it starts, "Send results"
// on a paused turn posts once however often it is clicked (and again after a refused post), and a
// thinking section opened while the reply streams stays open when the reply is saved.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { pausedConversation, signedInTab, turnsSettled } from "./page-waits";
import { api, base, transcript } from "./client";

let browser: Browser;
const contexts: BrowserContext[] = [];

/** A signed-in tab (a context of its own, as another window would be) whose websockets the test can reach. */
function tab(): Promise<Page> {
  return signedInTab(browser, contexts);
}

/** Opens a conversation in a tab and waits for its socket. */
async function open(p: Page, id: string) {
  await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
  await p.waitForSelector("#socket-status.live", { state: "attached" });
}

const settled = turnsSettled;

/** A conversation whose turn paused on the client tool ask_person, open in the tab with its panel. */
async function openPaused(p: Page, title: string) {
  const { id, paused } = await pausedConversation(title);
  await open(p, id);
  await p.locator("#pending-calls").waitFor();
  return { id, call: paused.requires_action!.calls[0].id };
}

/**
 * Counts the `tool_results` frames the tab's socket sends (`window.resultFrames`); with `bogus`,
 * the first one names a call that does not exist, so the server refuses it.
 */
async function watchResults(p: Page, bogus = false) {
  await p.evaluate((bogus) => {
    const s = window.sockets.at(-1)!;
    const real = s.send.bind(s);
    const w = window as unknown as { resultFrames: number };
    w.resultFrames = 0;
    s.send = (data: string) => {
      const frame = JSON.parse(data);
      if (frame.type !== "tool_results") return real(data);
      w.resultFrames++;
      if (!bogus || w.resultFrames > 1) return real(data);
      return real(JSON.stringify({ ...frame, results: [{ tool_use_id: "toolu_not_pending", content: "x" }] }));
    };
  }, bogus);
}

const resultFrames = (p: Page) => p.evaluate(() => (window as unknown as { resultFrames: number }).resultFrames);

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  // The stack's first turn is slow (a cold worker): taken here, not inside a test's waits.
  const id = (await api("POST", "/v1/conversations", { title: "warm-up" })).json.id;
  await api("POST", `/v1/conversations/${id}/messages`, { content: "warm up\n@reply-chars 20" });
});

// Each test's tabs close with it (their sockets too).
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await browser?.close();
});

describe("the chat open in two tabs", () => {
  it("a turn sent from another tab shows its question in this tab as soon as it starts, once", async () => {
    const [a, b] = [await tab(), await tab()];
    const id = (await api("POST", "/v1/conversations", { title: "two tabs" })).json.id;
    await open(a, id);
    await open(b, id);
    const question = "What lives in a lake?";
    await a.fill("#composer", `${question}\n@reply-chars 400\n@stream-pace 150`);
    await a.press("#composer", "Enter");
    // Tab B: the other tab's turn streams its reply; its question is there already.
    await b.waitForSelector(".turn.live .msg.assistant .md", { timeout: 60_000 });
    expect(
      await b.evaluate(() => document.querySelector(".turn.live .msg.user")?.textContent ?? "(no question shown)"),
    ).toContain(question);
    // The question comes before the reply, and stays one question when the reply is saved.
    expect(
      await b.evaluate(() => {
        const live = document.querySelector(".turn.live");
        return [...(live?.children ?? [])].map((c) => c.classList.contains("user"));
      }),
    ).toEqual([true, false]);
    await settled(b, 1);
    expect(await b.locator(".msg.user", { hasText: question }).count()).toBe(1);
    await settled(a, 1);
    expect(await a.locator(".msg.user", { hasText: question }).count()).toBe(1);
  });
});

describe("Send results on a paused turn", () => {
  it("posts the results once however often it is clicked while the continuation runs", async () => {
    const p = await tab();
    const { id, call } = await openPaused(p, "send results twice");
    await watchResults(p);
    await p.fill(`[data-answer="${call}"]`, "teal");
    // Two clicks in a row, before the server has said anything.
    await p.evaluate(() => {
      const button = document.querySelector<HTMLButtonElement>("#send-results")!;
      button.click();
      button.click();
    });
    expect(await p.locator("#send-results").getAttribute("aria-disabled")).toBe("true");
    await p.waitForSelector("#pending-calls", { state: "detached", timeout: 60_000 });
    await settled(p, 1);
    expect(await resultFrames(p)).toBe(1);
    expect(await p.locator(".turn-error").count()).toBe(0);
    const results = (await transcript(id)).filter(
      (m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"),
    );
    expect(results.length).toBe(1);
  });

  it("stays posted through a reconnect's catch-up, which names the calls before it reads the post", async () => {
    const p = await tab();
    const { id, call } = await openPaused(p, "send results over a reconnect");
    await p.fill(`[data-answer="${call}"]`, "teal");
    await p.evaluate(() => window.sockets.at(-1)!.close());
    await p.waitForSelector("#socket-status:not(.live)", { state: "attached" });
    // An impatient reader: clicks again whenever the button is offered while the post is taken.
    await p.evaluate(() => {
      const button = document.querySelector<HTMLButtonElement>("#send-results")!;
      new MutationObserver(() => {
        if (button.isConnected && button.getAttribute("aria-disabled") !== "true") button.click();
      }).observe(button, { attributes: true });
    });
    await p.click("#send-results");
    await p.waitForSelector("#pending-calls", { state: "detached", timeout: 60_000 });
    await settled(p, 1);
    expect(await p.locator(".turn-error").count()).toBe(0);
    const results = (await transcript(id)).filter(
      (m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"),
    );
    expect(results.length).toBe(1);
  });

  it("is offered again after a post the server refused, and then sends", async () => {
    const p = await tab();
    const { id } = await openPaused(p, "send results refused");
    await watchResults(p, true);
    await p.fill("[data-answer]", "teal");
    await p.click("#send-results");
    // Refused (a call the turn does not wait on): the error shows and the button works again.
    await p.waitForSelector(".turn-error");
    await p.waitForSelector("#send-results:not([aria-disabled])");
    expect(await p.locator("#send-results").textContent()).toBe("Send results");
    await p.click("#send-results");
    await p.waitForSelector("#pending-calls", { state: "detached", timeout: 60_000 });
    expect(await resultFrames(p)).toBe(2);
    const results = (await transcript(id)).filter(
      (m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"),
    );
    expect(results.length).toBe(1);
  });
});

describe("thinking opened while a reply streams", () => {
  it("stays open when the reply is saved and the transcript is drawn again", async () => {
    const p = await tab();
    const id = (await api("POST", "/v1/conversations", { title: "open thinking" })).json.id;
    await open(p, id);
    await p.fill("#composer", "Tell me about lakes.\n@reply-chars 400\n@stream-pace 150");
    await p.press("#composer", "Enter");
    await p.click(".turn.live details.thinking > summary", { timeout: 60_000 });
    expect(await p.locator(".turn.live details.thinking").evaluate((d) => d.hasAttribute("open"))).toBe(true);
    expect(await p.locator(".turn.live").count()).toBe(1);
    await settled(p, 1);
    expect(await p.locator(".turn.done details.thinking").count()).toBe(1);
    expect(await p.locator(".turn.done details.thinking").evaluate((d) => d.hasAttribute("open"))).toBe(true);
    // And through the next re-render (another client's turn ending).
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "more\n@reply-chars 40" })).status).toBe(
      200,
    );
    await settled(p, 2);
    expect(
      await p
        .locator(".turn.done")
        .first()
        .locator("details.thinking")
        .evaluate((d) => d.hasAttribute("open")),
    ).toBe(true);
  });
});
