// The web UI's Import and Export buttons in a real browser against the running stack: a JSONL
// transcript file becomes a conversation (opened in History), the conversation downloads as
// Markdown, and "Export all" runs the tenant-wide job and downloads its file.
import { readFileSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, base, KEY, transcript } from "./client";
import { signedInTab } from "./page-waits";

let browser: Browser;
let page: Page;
/** The tabs of their own that the error cases open (in this file's one browser), closed after each. */
const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  page = await browser.newPage({ acceptDownloads: true });
  page.setDefaultTimeout(30_000);
  await page.goto(`${base()}/`);
  await page.fill("#api-key", KEY);
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#new-chat-form");
  await page.goto(`${base()}/#/manage`);
  await page.waitForSelector("#import-form");
});

afterAll(async () => {
  await browser?.close();
});

const downloaded = async (click: () => Promise<void>) => {
  const [download] = await Promise.all([page.waitForEvent("download"), click()]);
  return { name: download.suggestedFilename(), text: readFileSync((await download.path())!, "utf8") };
};

describe("import and export in the web UI", () => {
  it("imports a transcript file, exports it as Markdown, and exports everything", async () => {
    const lines = [
      { role: "user", content: "What is the marmalade code?" },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "c1", name: "memory_search", input: { query: "marmalade" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "code MRM-2231" }] },
      { role: "assistant", content: "The marmalade code is MRM-2231." },
    ];
    await page.setInputFiles("#import-file", {
      name: "marmalade.jsonl",
      mimeType: "application/x-ndjson",
      buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")),
    });
    await page.click("#import-button");
    await page.waitForURL(/#\/c\/conv_[^/]+\/history/);
    const id = /#\/c\/(conv_[^/?]+)/.exec(page.url())![1];
    await page.waitForFunction(() =>
      document.querySelector("#history")?.textContent?.includes("The marmalade code is MRM-2231."),
    );
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);

    await page.selectOption("#export-format", "markdown");
    const md = await downloaded(() => page.click("#export-button"));
    expect(md.name).toBe(`${id}.md`);
    expect(md.text).toMatch(/^# marmalade/);
    expect(md.text).toContain("The marmalade code is MRM-2231.");

    await page.goto(`${base()}/#/manage`);
    await page.waitForSelector("#export-all");
    const all = await downloaded(() => page.click("#export-all"));
    expect(all.name).toMatch(/^exp_.*\.jsonl$/);
    expect(
      all.text
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .some((l) => l.type === "conversation" && l.id === id),
    ).toBe(true);

    // A file name holding what a title may not (a bidi override) imports under its visible part.
    await page.goto(`${base()}/#/manage`);
    await page.waitForSelector("#import-form");
    await page.setInputFiles("#import-file", {
      name: "notes\u202e.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify({ messages: [lines[0], lines[3]] })),
    });
    await page.click("#import-button");
    await page.waitForURL(/#\/c\/conv_[^/]+\/history/);
    const named = /#\/c\/(conv_[^/?]+)/.exec(page.url())![1];
    expect((await api("GET", `/v1/conversations/${named}`)).json.title).toBe("notes");
    await page.goto(`${base()}/#/manage`);
    await page.waitForSelector("#import-form");

    // A bad file is refused with the reason on the page, and nothing is created.
    await page.setInputFiles("#import-file", {
      name: "broken.json",
      mimeType: "application/json",
      buffer: Buffer.from(JSON.stringify({ messages: [lines[0], lines[2]] })),
    });
    await page.click("#import-button");
    await page.waitForFunction(() =>
      /messages\[1\]: tool_result for c1, which the previous assistant message did not call/.test(
        document.querySelector("#import-status")?.textContent ?? "",
      ),
    );
  });
});

const smallFile = {
  name: "small.jsonl",
  mimeType: "application/x-ndjson",
  buffer: Buffer.from(
    [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n"),
  ),
};

/** A tab on the Manage page, signed in with `key` (the shared one by default). */
async function managePage(key?: string): Promise<Page> {
  const p = await signedInTab(browser, contexts, key ? { key } : {});
  await p.goto(`${base()}/#/manage`);
  await p.waitForSelector("#import-form");
  return p;
}

/** A key of its own, to revoke while a page is signed in with it. */
async function revocableKey(name: string): Promise<{ apiKey: string; revoke: () => Promise<void> }> {
  const created = (await api("POST", "/v1/keys", { name })).json;
  return {
    apiKey: created.apiKey,
    revoke: async () => expect((await api("DELETE", `/v1/keys/${created.key.id}`)).status).toBe(200),
  };
}

describe("import and export errors read as every other call's", () => {
  it("an import refused for its key (401) signs out to the sign-in form saying the key was refused", async () => {
    const key = await revocableKey("transfer revoke import");
    const p = await managePage(key.apiKey);
    await key.revoke();
    await p.setInputFiles("#import-file", smallFile);
    await p.click("#import-button");
    await p.waitForSelector("#signin-form");
    await expect.poll(() => p.locator("#signin-form").textContent()).toMatch(/refused/);
  });

  it("a single chat's export refused for its key (401) signs out", async () => {
    const key = await revocableKey("transfer revoke export");
    const id = (await api("POST", "/v1/conversations", { title: "export 401" }, { key: key.apiKey })).json.id;
    const p = await signedInTab(browser, contexts, { key: key.apiKey });
    await p.goto(`${base()}/#/c/${id}/history`);
    // The view drawn (its title in), so the button clicked is the one that stays.
    await p.waitForFunction(() =>
      /History: export 401/.test(document.querySelector(".chat-head h1")?.textContent ?? ""),
    );
    await key.revoke();
    await p.click("#export-button");
    await p.waitForSelector("#signin-form");
    await expect.poll(() => p.locator("#signin-form").textContent()).toMatch(/refused/);
  });

  it("an import or export during a network drop says the server can't be reached", async () => {
    const p = await managePage();
    await p.route("**/v1/conversations/import**", (r) => r.abort("internetdisconnected"));
    await p.setInputFiles("#import-file", smallFile);
    await p.click("#import-button");
    await p.waitForSelector("#import-status .error-line");
    expect(await p.locator("#import-status").textContent()).toBe(
      "Can't reach the server. Check your connection and try again.",
    );
    expect(await p.getAttribute("#import-status", "role")).toBe("status");

    const id = (await api("POST", "/v1/conversations", { title: "export drop" })).json.id;
    await p.goto(`${base()}/#/c/${id}/history`);
    await p.waitForFunction(() =>
      /History: export drop/.test(document.querySelector(".chat-head h1")?.textContent ?? ""),
    );
    await p.route("**/export?format=**", (r) => r.abort("internetdisconnected"));
    await p.click("#export-button");
    await p.waitForSelector(".export-controls .error-line");
    expect(await p.locator(".export-controls .error-line").textContent()).toBe(
      "Can't reach the server. Check your connection and try again.",
    );
  });

  it("an import answered by a proxy's HTML 502 says the server had a problem, not a JSON parser's words", async () => {
    const p = await managePage();
    await p.route("**/v1/conversations/import**", (r) =>
      r.fulfill({ status: 502, contentType: "text/html", body: "<html><body>Bad gateway</body></html>" }),
    );
    await p.setInputFiles("#import-file", smallFile);
    await p.click("#import-button");
    await p.waitForSelector("#import-status .error-line");
    expect(await p.locator("#import-status").textContent()).toBe("The server had a problem. Try again.");
  });

  it("Export all pressed from the keyboard keeps the focus on its button, and counts one conversation in the singular", async () => {
    const p = await managePage();
    // The job is the server's answer as it would be, held "running" for a few polls.
    let polls = 0;
    let started = 0;
    await p.route("**/v1/exports", (r) => {
      if (r.request().method() !== "POST") return r.fallback();
      started++;
      return r.fulfill({ status: 202, json: { id: "exp_focus", status: "queued" } });
    });
    await p.route("**/v1/exports/exp_focus", (r) =>
      r.fulfill({
        json:
          ++polls < 3
            ? { id: "exp_focus", status: "running" }
            : { id: "exp_focus", status: "done", conversations: 1, download: "/v1/exports/exp_focus/download" },
      }),
    );
    await p.route("**/v1/exports/exp_focus/download", (r) =>
      r.fulfill({ contentType: "application/x-ndjson", body: '{"type":"conversation"}\n' }),
    );
    expect(await p.getAttribute("#export-all-status", "role")).toBe("status");
    await p.focus("#export-all");
    await p.keyboard.press("Enter");
    await p.waitForFunction(() =>
      /Export (queued|running)/.test(document.querySelector("#export-all-status")?.textContent ?? ""),
    );
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("export-all");
    expect(await p.getAttribute("#export-all", "aria-disabled")).toBe("true");
    // A second press while it runs starts no second job.
    await p.keyboard.press("Enter");
    await p.waitForFunction(() => /Exported/.test(document.querySelector("#export-all-status")?.textContent ?? ""));
    expect(await p.locator("#export-all-status").textContent()).toBe("Exported 1 conversation.");
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("export-all");
    expect(await p.getAttribute("#export-all", "aria-disabled")).toBeNull();
    expect(started).toBe(1);
  });
});
