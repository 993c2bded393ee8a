// A GFM table written straight after a paragraph line or a list item (no blank line between) renders
// as a table, not as the paragraph's (or item's) raw pipes; and the reply streamed piece by piece
// renders to the same HTML as the whole text at once.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { base } from "./client";

let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  context = await browser.newContext();
  page = await context.newPage();
  await page.goto(`${base()}/`, { waitUntil: "domcontentloaded", timeout: 60_000 });
});

afterAll(async () => {
  await browser?.close();
});

/** The HTML of `text` rendered whole, and rendered into one element growing a few characters at a time. */
async function render(text: string): Promise<{ whole: string; streamed: string }> {
  // A string, so the test runner does not rewrite the page's own dynamic import.
  return (await page.evaluate(`(async () => {
    const { renderMarkdown } = await import("/js/markdown.js");
    const text = ${JSON.stringify(text)};
    const whole = renderMarkdown(document.createElement("div"), text).innerHTML;
    const el = document.createElement("div");
    for (let i = 1; i <= text.length; i += 3) renderMarkdown(el, text.slice(0, i));
    renderMarkdown(el, text);
    return { whole, streamed: el.innerHTML };
  })()`)) as { whole: string; streamed: string };
}

const TABLE =
  '<div class="table-wrap" dir="ltr" tabindex="0" role="region" aria-label="table"><table><thead><tr><th dir="auto">a</th><th dir="auto">b</th></tr></thead><tbody><tr><td dir="auto">1</td><td dir="auto">2</td></tr></tbody></table></div>';

describe("a table with no blank line before it", () => {
  it("after a paragraph line: the paragraph, then the table", async () => {
    const { whole, streamed } = await render("Here is the comparison:\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(whole).toBe(`<p dir="auto">Here is the comparison:</p>${TABLE}`);
    expect(streamed).toBe(whole);
  });

  it("after a list item: the list, then the table", async () => {
    const { whole, streamed } = await render("- one\n- two\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(whole).toBe(`<ul><li dir="auto">one</li><li dir="auto">two</li></ul>${TABLE}`);
    expect(streamed).toBe(whole);
  });

  it("with text after it: paragraph, table, paragraph", async () => {
    const { whole, streamed } = await render("Compare:\n| a | b |\n|---|---|\n| 1 | 2 |\n\nThat is all.");
    expect(whole).toBe(`<p dir="auto">Compare:</p>${TABLE}<p dir="auto">That is all.</p>`);
    expect(streamed).toBe(whole);
  });

  it("a line with a pipe followed by a rule of another width is no table: the rule underlines it (setext)", async () => {
    const { whole } = await render("Pick one:\nred | blue | green\n---");
    expect(whole).toBe('<h3 class="md-h" dir="auto">Pick one:<br>red | blue | green</h3>');
  });
});
