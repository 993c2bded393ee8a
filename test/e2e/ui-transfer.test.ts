// The web UI's Import and Export buttons in a real browser against the running stack: a JSONL
// transcript file becomes a conversation (opened in History), the conversation downloads as
// Markdown, and "Export all" runs the tenant-wide job and downloads its file.
import { readFileSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, base, KEY, transcript } from "./client";

let browser: Browser;
let page: Page;

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
