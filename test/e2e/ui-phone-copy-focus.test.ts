// Web UI faults a review proved in a real browser: a long unbroken word ran Search, All chats and
// other views off a phone's screen sideways; one failed GET /v1/models broke Settings and the
// new-chat model picker until a reload; a Copy button clicked twice stayed "Copied"; and "Load more"
// (Search, History) pressed from the keyboard dropped the focus on the page's body; and Search
// guessed who said a hit from its snippet ("Tool result" for a person's words starting with "tool",
// "You" for a tool's result), where the hit's `from` says it.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, base, KEY } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const { browser, contexts } = browserForFile();
const PHONE = { width: 360, height: 740 };

/** Waits until a search for `word` finds at least `n` hits (the cortex indexes in the background). */
const indexed = (word: string, n: number) =>
  expect
    .poll(async () => ((await api("GET", `/v1/search?q=${word}&limit=100`)).json.data as unknown[]).length, {
      timeout: 60_000,
    })
    .toBeGreaterThanOrEqual(n);

/** The focused element as `TAG#id` (or `TAG.class` when it has no id). */
const focused = (p: Page) =>
  p.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName}${el.id ? `#${el.id}` : `.${el.className}`}` : "none";
  });

describe("the web UI on a phone, its Copy buttons, the model list and Load more", () => {
  it("at 360 px a long unbroken word fits the screen in every view", async () => {
    const long = `ff${"x".repeat(150)}`;
    const imported = await api("POST", `/v1/conversations/import?title=${long}`, {
      messages: [
        { role: "user", content: `hello ${long}` },
        { role: "assistant", content: `ok ${long}` },
      ],
    });
    expect(imported.status).toBe(201);
    const id = imported.json.id as string;
    await indexed(long, 1);
    const p = await signedInTab(browser(), contexts, { viewport: PHONE });
    /** Each view and what shows once it has drawn its content. */
    const views: [string, string, string][] = [
      ["chat", `#/c/${id}`, "#chat-title"],
      ["history", `#/c/${id}/history`, "#history .msg"],
      ["replay", `#/c/${id}/replay`, "#view h1"],
      ["settings", `#/c/${id}/settings`, "#set-model"],
      ["search", `#/search?q=${long}`, "#search-results .snippet"],
      ["manage", "#/manage", `#conversations a[href="#/c/${id}"]`],
    ];
    const widths: Record<string, string> = {};
    for (const [name, hash, drawn] of views) {
      await p.evaluate((h) => (location.hash = h), hash);
      await p.waitForSelector(drawn);
      if (name !== "settings")
        await p.waitForFunction((w) => document.querySelector("main")?.textContent?.includes(w), long);
      widths[name] = await p.evaluate(() => {
        const m = document.querySelector("main") as HTMLElement;
        return `${Math.max(m.scrollWidth, document.documentElement.scrollWidth)}/${m.clientWidth}`;
      });
    }
    expect(widths).toEqual(Object.fromEntries(views.map(([name]) => [name, "360/360"])));
  });

  it("one failed GET /v1/models does not break Settings nor the new-chat picker for the page's life", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "models 503" })).json.id as string;
    const context = await browser().newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    let failures = 1;
    await context.route("**/v1/models*", (route) => {
      if (failures <= 0) return route.continue();
      failures--;
      return route.fulfill({
        status: 503,
        contentType: "application/json",
        body: '{"type":"error","error":{"type":"overloaded_error","message":"try again"}}',
      });
    });
    const p = await context.newPage();
    await p.goto(`${base()}/`, { waitUntil: "domcontentloaded" });
    await p.fill("#api-key", KEY);
    await p.click("#signin-form button[type=submit]");
    await p.waitForSelector("#new-chat-form");
    // The new-chat page says the list failed and that the default model is used.
    await expect.poll(() => p.locator("#new-chat-form .model-pick").textContent()).toMatch(/default model/i);
    expect(failures).toBe(0);
    await p.evaluate((h) => (location.hash = h), `#/c/${id}/settings`);
    await p.waitForSelector("#set-model");
    expect(await p.locator("#set-model option").count()).toBeGreaterThan(0);
    // Back on a new chat, the picker shows again.
    await p.evaluate(() => (location.hash = "#/"));
    await p.waitForSelector("#new-model");
  });

  it("a code block's Copy and a reply's Copy, clicked twice, read 'Copy' again afterwards", async () => {
    const id = (
      await api("POST", "/v1/conversations/import?title=Copy%20twice", {
        messages: [
          { role: "user", content: "show code" },
          { role: "assistant", content: "Here:\n\n```js\nconst a = 1;\n```\n" },
        ],
      })
    ).json.id as string;
    const p = await signedInTab(browser(), contexts);
    await p.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base() });
    await p.evaluate((h) => (location.hash = h), `#/c/${id}`);
    const buttons = [p.locator(".copy-code").first(), p.locator('button.copy[aria-label="Copy reply"]').first()];
    for (const copy of buttons) {
      await copy.click();
      await expect.poll(() => copy.textContent()).toBe("Copied");
      await copy.click();
      expect(await copy.textContent()).toBe("Copied");
    }
    for (const copy of buttons) await expect.poll(() => copy.textContent(), { timeout: 5_000 }).toBe("Copy");
    // And they stay "Copy": no later timer puts "Copied" back. What is checked is that nothing
    // changes, which no poll can wait for: the label's timer is 1.5 s, so 2 s covers every click's.
    await p.waitForTimeout(2_000);
    for (const copy of buttons) expect(await copy.textContent()).toBe("Copy");
  });

  it("Search names who said each hit from the hit's from: the person's message is You, a tool's result Tool result", async () => {
    const word = `toolboxlabel${Date.now()}`;
    const imported = await api("POST", "/v1/conversations/import?title=Hit%20labels", {
      messages: [
        { role: "user", content: `${word} prices at the hardware shop?` },
        { role: "assistant", content: "Let me look." },
        { role: "user", content: "look it up" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_label1", name: "web_lookup", input: { q: "x" } }],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_label1", content: `Result: ${word} costs 12 dollars` }],
        },
        { role: "assistant", content: "It costs 12 dollars." },
      ],
    });
    expect(imported.status).toBe(201);
    await indexed(word, 2);
    const p = await signedInTab(browser(), contexts);
    await p.evaluate((h) => (location.hash = h), `#/search?q=${word}`);
    await p.waitForFunction(() => /match/.test(document.getElementById("search-status")?.textContent ?? ""));
    const rows = await p.$$eval("#search-results > li", (items) =>
      items.map((li) => ({
        who: li.querySelector(".hit-head .muted")?.textContent?.split(" · ")[0],
        text: li.querySelector(".snippet")?.textContent ?? "",
      })),
    );
    expect(rows.find((r) => r.text.includes("prices"))?.who).toBe("You");
    expect(rows.find((r) => r.text.includes("costs"))?.who).toBe("Tool result");
  });

  it("Search's Load more pressed from the keyboard keeps the focus, then hands it to the last page's first hit", async () => {
    const word = `kbmore${Date.now()}`;
    const messages = Array.from({ length: 120 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `${word} line ${i}`,
    }));
    expect((await api("POST", "/v1/conversations/import?title=Keyboard%20more", { messages })).status).toBe(201);
    await expect
      .poll(async () => (await api("GET", `/v1/search?q=${word}&limit=100&cursor=100`)).json.data?.length ?? -1, {
        timeout: 60_000,
      })
      .toBeGreaterThan(10);
    const p = await signedInTab(browser(), contexts);
    await p.evaluate((h) => (location.hash = h), `#/search?q=${word}`);
    await p.waitForFunction(() => /match/.test(document.getElementById("search-status")?.textContent ?? ""));
    await p.focus("#search-more");
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#search-results > li").count()).toBe(100);
    await expect.poll(() => focused(p)).toBe("BUTTON#search-more");
    // The last page: the button goes, and the focus moves to the first hit it brought.
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#search-more:not([hidden])").count()).toBe(0);
    await expect.poll(() => focused(p)).toBe("A.hit-link");
    expect(
      await p.evaluate(() => document.activeElement?.closest("li")?.matches("#search-results > li:nth-child(101)")),
    ).toBe(true);
  });

  it("Search's Load more hands the focus to the last page's first hit when it is a note (no link)", async () => {
    const word = `kbnote${Date.now()}`;
    for (let i = 0; i < 51; i++)
      expect((await api("POST", "/v1/memory", { text: `${word} note number ${i}` })).status).toBe(201);
    await expect
      .poll(async () => (await api("GET", `/v1/search?q=${word}&limit=100`)).json.data?.length ?? -1, {
        timeout: 60_000,
      })
      .toBe(51);
    const p = await signedInTab(browser(), contexts);
    await p.evaluate((h) => (location.hash = h), `#/search?q=${word}`);
    await p.waitForFunction(() => /match/.test(document.getElementById("search-status")?.textContent ?? ""));
    await p.focus("#search-more");
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#search-results > li").count()).toBe(51);
    await expect.poll(() => p.locator("#search-more:not([hidden])").count()).toBe(0);
    await expect
      .poll(() => p.evaluate(() => document.activeElement?.matches("#search-results > li:nth-child(51)") ?? false))
      .toBe(true);
  });

  it("History's Load more keeps the focus while pages load, then hands it to the last page's first message", async () => {
    const messages = Array.from({ length: 60 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `history line ${i}`,
    }));
    const imported = await api("POST", "/v1/conversations/import?title=Keyboard%20history", { messages });
    expect(imported.status).toBe(201);
    const p = await signedInTab(browser(), contexts, { viewport: { width: 1280, height: 400 } });
    await p.evaluate((h) => (location.hash = h), `#/c/${imported.json.id}/history?limit=20`);
    await p.waitForSelector("#history .msg");
    expect(await p.locator("#history .msg").count()).toBe(20);
    // Reaching the button from the keyboard brings it into view, which loads the next page: the
    // focus stays on the button.
    await p.focus("#history-more");
    await expect.poll(() => p.locator("#history .msg").count()).toBe(40);
    await expect.poll(() => p.locator("#history-more:not([aria-disabled])").count()).toBe(1);
    expect(await focused(p)).toBe("BUTTON#history-more");
    await p.keyboard.press("Enter");
    await expect.poll(() => p.locator("#history .msg").count()).toBe(60);
    await expect.poll(() => p.locator("#history-more:not([hidden])").count()).toBe(0);
    // The last page took the button away: the focus is on the first message it brought, not the body.
    await expect.poll(() => p.evaluate(() => document.activeElement?.getAttribute("data-seq"))).toBe("41");
  });
});
