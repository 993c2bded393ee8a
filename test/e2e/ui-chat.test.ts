// The chat as a person uses it, in a real browser against the running stack: replies rendered as
// markdown (built as DOM nodes), Stop on a streaming turn (saved as interrupted) with the waiting
// state before the first token, Regenerate, edit-and-resend, Copy, Retry on a failed turn, the
// sidebar (new chat straight into the composer, titles the server's model writes, the order by
// last activity the server gives, rename, delete), the settings
// form, the connection banner, sign-in on a revoked key, "stay signed in", the theme toggle, and
// axe-core on every page at desktop and phone width in both themes (screenshots of each kept in
// test-artifacts/ui-chat/).
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium, keepSockets } from "./browser";
import { pausedConversation, turnsSettled } from "./page-waits";
import { api, base, KEY, textBlocks, transcript } from "./client";

const SHOTS = new URL("../../test-artifacts/ui-chat/", import.meta.url).pathname;
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let browser: Browser;
let context: BrowserContext;
let page: Page;

async function signIn(p: Page, key = KEY, remember = false) {
  await p.goto(`${base()}/`);
  await p.fill("#api-key", key);
  if (remember) await p.check("#remember");
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form");
}

/** A new chat from the home composer: the conversation is created on the first message. */
async function newChat(first: string): Promise<string> {
  await page.goto(`${base()}/#/`);
  await page.waitForSelector("#new-chat-form");
  await page.fill("#composer", first);
  await page.press("#composer", "Enter");
  await page.waitForURL(/#\/c\/conv_/);
  return /#\/c\/(conv_[^/?]+)/.exec(page.url())![1];
}

/** Waits until no turn is streaming and at least `n` finished turns are on the page. */
const settled = (n: number) => turnsSettled(page, n);

/** Stages a text file in the composer, as a person picking one would. */
async function stageText(name: string, body: string) {
  await page.setInputFiles("#file-input", { name, mimeType: "text/plain", buffer: Buffer.from(body) });
}

async function send(text: string) {
  const before = await page.locator(".turn.done").count();
  await page.fill("#composer", text);
  await page.press("#composer", "Enter");
  await page.waitForFunction(
    (n) => document.querySelectorAll(".turn.done").length > n && !document.querySelector(".turn.live"),
    before,
    { timeout: 60_000 },
  );
}

/** axe-core in the page: the serious and critical violations, by rule. */
async function axe(p: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's CSP does not govern (an injected
  // <script> would be refused, as it should be).
  if (!(await p.evaluate(() => "axe" in window))) await p.evaluate(AXE);
  const result = await p.evaluate(async () => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id}: ${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 3)
          .join(", ")}`,
    );
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base() });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on("pageerror", (err) => console.error("page error:", err));
  await keepSockets(page);
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
});

const REPLY = [
  "## Plan",
  "",
  "Use **bold** words, *emphasis*, ~~old~~ and `inline()` code.",
  "",
  "1. first step",
  "2. second step",
  "   - a nested point",
  "",
  "```js",
  "const answer = 6 * 7;",
  "console.log(answer);",
  "```",
  "",
  "| tool | calls |",
  "|:-----|------:|",
  "| memory_search | 3 |",
  "",
  "> quoted line",
  "",
  "See [the docs](https://example.com/docs) or [this](javascript:alert(1)).",
  '<script>window.hacked = true</script><img src=x onerror="window.hacked = true">',
].join("\n");

/** The page's next `send` frame never leaves: its socket closes instead, as a half-open one would. */
async function closeSocketOnSend() {
  await page.evaluate(() => {
    const s = window.sockets.at(-1)!;
    const real = s.send.bind(s);
    s.send = (data: string) => (JSON.parse(data).type === "send" ? s.close() : real(data));
  });
}
/** A conversation whose turn paused on the client tool ask_person, open in the page with its panel and a live socket. */
async function openPausedChat(title: string) {
  const { id, paused } = await pausedConversation(title);
  await page.goto(`${base()}/#/c/${id}`);
  await page.locator("#pending-calls").waitFor();
  await page.waitForSelector("#socket-status.live", { state: "attached" });
  return { id, paused };
}
describe("the chat", () => {
  let markdownId: string;

  it("renders replies as markdown built from DOM nodes: headings, lists, code with its language and Copy, tables, safe links", async () => {
    const imported = await api("POST", "/v1/conversations/import?title=Markdown%20check", {
      messages: [
        { role: "user", content: "Show me the plan." },
        { role: "assistant", content: REPLY },
      ],
    });
    expect(imported.status).toBe(201);
    markdownId = imported.json.id;
    await page.goto(`${base()}/#/c/${markdownId}`);
    const reply = page.locator(".turn.done .msg.assistant .md").first();
    await reply.waitFor();
    expect(await reply.locator("h3").textContent()).toBe("Plan");
    expect(await reply.locator("strong").first().textContent()).toBe("bold");
    expect(await reply.locator("em").first().textContent()).toBe("emphasis");
    expect(await reply.locator("del").textContent()).toBe("old");
    expect(await reply.locator("p code").first().textContent()).toBe("inline()");
    expect(await reply.locator("ol > li").count()).toBe(2);
    expect(await reply.locator("ol > li ul > li").textContent()).toBe("a nested point");
    const code = reply.locator(".code-block");
    expect(await code.locator(".code-lang").textContent()).toBe("js");
    expect(await code.locator("pre code").textContent()).toBe("const answer = 6 * 7;\nconsole.log(answer);");
    expect(await code.locator("pre").evaluate((el) => getComputedStyle(el).fontFamily)).toMatch(/mono/i);
    expect(await reply.locator("table th").allTextContents()).toEqual(["tool", "calls"]);
    expect(await reply.locator("table td.al-right").textContent()).toBe("3");
    expect(await reply.locator("blockquote").textContent()).toContain("quoted line");
    const link = reply.locator('a[href="https://example.com/docs"]');
    expect(await link.getAttribute("rel")).toContain("noopener");
    expect(await link.getAttribute("target")).toBe("_blank");
    // A javascript: link stays text; markup in the reply stays text.
    expect(await reply.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await reply.textContent()).toContain("<script>window.hacked = true</script>");
    expect(
      await page.evaluate(() => ({
        scripts: document.querySelectorAll(".md script, .md img").length,
        hacked: window.hacked ?? false,
      })),
    ).toEqual({ scripts: 0, hacked: false });
    // Copy puts the code on the clipboard.
    await code.locator("button.copy-code").click();
    await expect.poll(() => code.locator("button.copy-code").textContent()).toBe("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
      "const answer = 6 * 7;\nconsole.log(answer);",
    );
    await page.screenshot({ path: `${SHOTS}markdown.png` });
  });

  it("renders a streaming reply incrementally: earlier blocks keep their nodes while the last one grows", async () => {
    // A string, so the test runner does not rewrite the page's own dynamic import.
    const nodes = await page.evaluate(`(async () => {
      const { renderMarkdown } = await import("/js/markdown.js");
      const el = document.createElement("div");
      renderMarkdown(el, "# Title\\n\\nFirst paragraph.\\n\\nSecond");
      const [h, p] = [el.children[0], el.children[1]];
      renderMarkdown(el, "# Title\\n\\nFirst paragraph.\\n\\nSecond paragraph grows\\n\\n\`\`\`py\\nprint(1)");
      return { sameHeading: el.children[0] === h, sameParagraph: el.children[1] === p, blocks: el.children.length, openFence: el.querySelector(".code-lang")?.textContent };
    })()`);
    expect(nodes).toEqual({ sameHeading: true, sameParagraph: true, blocks: 4, openFence: "py" });
  });

  it("renders the inline edge cases a reply has: C# in a heading, ***bold italic***, code spans before emphasis, links with parentheses", async () => {
    const cases = [
      "## Learning C#",
      "## Closed heading ##",
      "***bold italic***",
      "Use *args or `**kwargs` in Python",
      "~~old `a~~b` new~~",
      "*see `x` here*",
      "[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) and https://en.wikipedia.org/wiki/Foo_(bar).",
      "(see https://example.com/a)",
      "a private-use \uE0007\uE001 pair stays text",
    ];
    const html = (await page.evaluate(`(async () => {
      const { renderMarkdown } = await import("/js/markdown.js");
      return ${JSON.stringify(cases)}.map((c) => renderMarkdown(document.createElement("div"), c).innerHTML);
    })()`)) as string[];
    const link = (href: string, text: string) =>
      `<a href="${href}" target="_blank" rel="noopener noreferrer nofollow">${text}</a>`;
    const wiki = "https://en.wikipedia.org/wiki/Foo_(bar)";
    expect(html).toEqual([
      `<h3 class="md-h" dir="auto">Learning C#</h3>`,
      `<h3 class="md-h" dir="auto">Closed heading</h3>`,
      '<p dir="auto"><strong><em>bold italic</em></strong></p>',
      '<p dir="auto">Use *args or <code>**kwargs</code> in Python</p>',
      '<p dir="auto"><del>old <code>a~~b</code> new</del></p>',
      '<p dir="auto"><em>see <code>x</code> here</em></p>',
      `<p dir="auto">${link(wiki, "Foo")} and ${link(wiki, wiki)}.</p>`,
      `<p dir="auto">(see ${link("https://example.com/a", "https://example.com/a")})</p>`,
      '<p dir="auto">a private-use \uE0007\uE001 pair stays text</p>',
    ]);
  });

  it("Stop ends a streaming turn through the API, saved as interrupted; a waiting line shows between send and the first token", async () => {
    const id = await newChat("How do rivers carve canyons?\n@reply-chars 400");
    await settled(1);
    // The server's model titled the conversation after the first exchange (the offline model: the
    // first prompt's first words, its directive line left out), shown in the heading and the sidebar.
    await expect
      .poll(() => page.locator("#chat-title").textContent(), { timeout: 15_000 })
      .toBe("How do rivers carve canyons");
    await expect
      .poll(() => page.locator(`#conversation-list li[data-id="${id}"] .conv-link`).textContent(), { timeout: 15_000 })
      .toBe("How do rivers carve canyons");
    expect((await api("GET", `/v1/conversations/${id}`)).json.title).toBe("How do rivers carve canyons");

    await page.evaluate(() => {
      const w = window;
      w.sawWaiting = false;
      new MutationObserver(() => {
        if (document.querySelector(".turn.live .waiting") && !document.querySelector(".turn.live .md"))
          w.sawWaiting = true;
      }).observe(document.body, { childList: true, subtree: true });
    });
    await page.fill("#composer", "Tell me much more.\n@reply-chars 3000\n@hold-stream after=300");
    await page.press("#composer", "Enter");
    // Send becomes Stop while the turn runs; the composer is cleared, Enter sends nothing more.
    await page.waitForSelector("#stop:not([hidden])");
    expect(await page.locator("#send").isHidden()).toBe(true);
    await page.locator(".turn.live .md").waitFor();
    await page.waitForFunction(() => (document.querySelector(".turn.live .md")?.textContent?.length ?? 0) > 250);
    expect(await page.evaluate(() => window.sawWaiting)).toBe(true);
    await page.screenshot({ path: `${SHOTS}streaming.png` });
    await page.click("#stop");
    await settled(2);
    const saved = await transcript(id);
    expect(saved.at(-1)).toMatchObject({ role: "assistant", stopReason: "interrupted" });
    const text = textBlocks(saved.at(-1)!.content).join("");
    expect(text.length).toBeGreaterThan(250);
    expect(text.length).toBeLessThan(2000);
    const last = page.locator(".turn.done").last();
    expect(await last.locator(".stopped-note").textContent()).toBe("Stopped");
    expect((await last.locator(".msg.assistant .md").textContent())!.replace(/\s+/g, " ").trim()).toBe(
      text.replace(/\s+/g, " ").trim(),
    );
    expect(await page.locator("#send").isVisible()).toBe(true);
    await page.screenshot({ path: `${SHOTS}stopped.png` });
  });

  it("Regenerate replaces the last reply: one visible reply, the new one; the old one is superseded, kept, and not replayed; edit-and-resend and Copy work on messages", async () => {
    const id = await newChat("Name a river.\n@reply-chars 200");
    await settled(1);
    const first = await page.locator(".turn.done .msg.assistant").last().getAttribute("data-ids");
    await page.click("#regenerate");
    await page.waitForFunction(
      (ids) =>
        document.querySelector(".settled > .turn.done:last-child > .msg.assistant")?.getAttribute("data-ids") !== ids &&
        !document.querySelector(".turn.live"),
      first,
      { timeout: 60_000 },
    );
    await settled(1);
    expect(await page.locator(".turn.done").count()).toBe(1);
    const turn = page.locator(".turn.done").last();
    // One visible reply, the new one, as version 2 of 2; ‹ steps back to the replaced one, marked
    // as no longer sent to the model, whose Copy copies it; › comes back to the new one.
    expect(await turn.locator(".msg.assistant:visible").count()).toBe(1);
    const latest = await turn.locator("> .msg.assistant").getAttribute("data-ids");
    expect(latest).not.toBe(first);
    expect(await turn.locator(".version-count").textContent()).toBe("2 / 2");
    expect(await turn.locator(".next-version").isDisabled()).toBe(true);
    expect(await turn.locator(".version-note").count()).toBe(0);
    await turn.locator(".prev-version").click();
    expect(await turn.locator(".version-count").textContent()).toBe("1 / 2");
    expect(await turn.locator(".msg.assistant:visible").count()).toBe(1);
    expect(await turn.locator("> .msg.assistant").getAttribute("data-ids")).toBe(first);
    expect(await turn.locator(".version-note").textContent()).toMatch(/no longer sent to the model/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Next version");
    await page.screenshot({ path: `${SHOTS}reply-versions.png` });
    await turn.locator(".msg.assistant button.copy").click();
    const replaced = (await transcript(id))[1];
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(textBlocks(replaced.content).join("\n\n"));
    await turn.locator(".next-version").click();
    expect(await turn.locator("> .msg.assistant").getAttribute("data-ids")).toBe(latest);
    expect(await turn.locator(".version-count").textContent()).toBe("2 / 2");
    // The API: the first exchange is kept and marked, and the model's next request has the prompt once.
    const saved = await transcript(id);
    expect(saved.map((m) => !!m.superseded)).toEqual([true, true, false, false]);
    expect(saved[0].supersededBy).toBe(saved[2].id);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // The same after a reload (rendered from the transcript's markers, not from the live events).
    await page.reload();
    await settled(1);
    expect(await page.locator(".turn.done").count()).toBe(1);
    expect(await page.locator(".turn.done .msg.assistant:visible").count()).toBe(1);
    expect(await page.locator(".turn.done > .msg.assistant").getAttribute("data-ids")).not.toBe(first);
    expect(await page.locator(".turn.done .version-count").textContent()).toBe("2 / 2");
    // The version picked stays picked while the transcript re-renders (the next turn, below).
    await turn.locator(".prev-version").click();
    // Copy the person's message, then edit it and send it again as a new turn.
    await turn.locator(".msg.user button.copy").click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("Name a river.\n@reply-chars 200");
    // Escape closes the editor and gives the focus back to Edit.
    await turn.locator(".msg.user button.edit").click();
    await page.keyboard.press("Escape");
    expect(await page.locator(".edit-box").count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.className ?? "")).toContain("edit");
    await turn.locator(".msg.user button.edit").click();
    await page.fill(".edit-box", "Name a mountain.\n@reply-chars 200");
    await page.click(".editor .resend");
    await settled(2);
    expect(await page.locator(".turn.done .msg.user .text").last().textContent()).toBe(
      "Name a mountain.\n@reply-chars 200",
    );
    expect(await page.locator(".turn.done").first().locator(".version-count").textContent()).toBe("1 / 2");
    expect(await page.locator(".turn.done").first().locator("> .msg.assistant").getAttribute("data-ids")).toBe(first);
  });

  it("a regenerate stopped before its reply shows as an empty version with Regenerate, which runs it again", async () => {
    const id = await newChat("Name a lake.\n@reply-chars 20\n@stream-pace 1000");
    await settled(1);
    await page.click("#regenerate");
    await page.click("#stop");
    await page.waitForFunction(() => document.querySelector(".settled .version-count")?.textContent === "2 / 2", null, {
      timeout: 60_000,
    });
    await settled(1);
    const turn = page.locator(".turn.done").last();
    expect(await turn.locator(".version-note").textContent()).toMatch(/^No reply/);
    expect(await turn.locator(".msg.assistant button.copy").count()).toBe(0);
    // The earlier reply is a step back, and Regenerate is offered on the empty version.
    await turn.locator(".prev-version").click();
    expect(await turn.locator(".version-count").textContent()).toBe("1 / 2");
    expect(await turn.locator("> .msg.assistant .md").count()).toBeGreaterThan(0);
    await page.click("#regenerate");
    // The new reply is the last version; the empty one is not kept as a version of its own.
    await page.waitForFunction(
      () =>
        !document.querySelector(".turn.live") &&
        !!document.querySelector(".settled > .turn.done:last-child > .msg.assistant")?.getAttribute("data-ids"),
      null,
      { timeout: 60_000 },
    );
    await settled(1);
    expect(await turn.locator(".version-count").textContent()).toBe("2 / 2");
    expect(await turn.locator(".version-note").count()).toBe(0);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a picked file is staged as a chip (name, type, size) that can be removed; the empty-chat text gives way to it", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "staging" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    expect(await page.locator(".log .empty").count()).toBe(1);
    await stageText("notes.txt", "alpha\nbeta\n");
    const chip = page.locator('.upload.staged:has-text("notes.txt")');
    await chip.waitFor();
    expect(await chip.locator(".file-type").textContent()).toBe("text/plain");
    expect(await chip.locator(".file-size").textContent()).toMatch(/^11\s*B$/);
    expect(await page.locator(".log .empty").count()).toBe(0);
    expect(await axe(page)).toEqual([]);
    // Nothing is uploaded before Send: the conversation has no attachment and no note.
    expect((await api("GET", `/v1/conversations/${id}/attachments`)).json.data).toEqual([]);
    await chip.locator("button.remove").click();
    expect(await page.locator(".upload").count()).toBe(0);
    expect(await page.locator(".log .empty").count()).toBe(1);
    expect((await transcript(id)).length).toBe(0);
  });

  it("a file removed (✕) while Send uploads it is not sent: its upload stops, the message goes with the others", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "removed in flight" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    // The second file's upload is held in the network until the test lets it go; the page's
    // cancel then ends it there, as an aborted request that has not been answered ends.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atUpload = new Promise<void>((r) => (reached = r));
    await page.route("**/attachments?name=secrets.txt*", async (route) => {
      reached();
      await held;
      await route.abort("aborted").catch(() => {});
    });
    for (const name of ["report.txt", "secrets.txt"])
      await page.setInputFiles("#file-input", { name, mimeType: "text/plain", buffer: Buffer.from(`${name}\n`) });
    await page.fill("#composer", "summarize the report");
    await page.press("#composer", "Enter");
    await atUpload;
    await page.locator('.upload.staged:has-text("secrets.txt") button.remove').click();
    release();
    await settled(1);
    await page.unroute("**/attachments?name=secrets.txt*");
    const names = (await api("GET", `/v1/conversations/${id}/attachments`)).json.data.map((a) => a.name);
    expect(names).toEqual(["report.txt"]);
    expect(JSON.stringify((await transcript(id))[0].content)).not.toContain("secrets.txt");
  });

  it("Retry after a send that never reached the server sends the files it had uploaded", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "retry with files" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    // The socket drops and no new ticket can be had: the send fails after its file went up.
    await page.route("**/ws-ticket", (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: '{"error":{"type":"unavailable","message":"down"}}',
      }),
    );
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.waitForSelector("#socket-status:not(.live)", { state: "attached" });
    await stageText("contract.txt", "clause 1\n");
    await page.fill("#composer", "check clause 1 of the contract");
    await page.press("#composer", "Enter");
    await page.waitForSelector(".turn-error button.retry");
    await page.unroute("**/ws-ticket");
    await page.click(".turn-error button.retry");
    await settled(1);
    const [prompt] = await transcript(id);
    expect(JSON.stringify(prompt.content)).toContain("contract.txt");
    expect((await api("GET", `/v1/conversations/${id}/attachments`)).json.data).toHaveLength(1);
  });

  it("a message whose send the dropped socket lost goes back into the composer; nothing is left thinking", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "lost send" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    await closeSocketOnSend();
    await page.fill("#composer", "a message the network ate");
    await page.press("#composer", "Enter");
    await page.waitForFunction(() => (document.querySelector("#composer") as HTMLTextAreaElement).value !== "", null, {
      timeout: 30_000,
    });
    expect(await page.inputValue("#composer")).toBe("a message the network ate");
    expect(await page.locator(".turn.live").count()).toBe(0);
    expect(await transcript(id)).toEqual([]);
    // Send is back: the page is not left waiting on a turn that never started.
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    expect(await page.locator("#send").isVisible()).toBe(true);
    expect(await page.locator("#stop").isVisible()).toBe(false);
    await page.fill("#composer", "");
  });

  it("another client's turn that starts while this page's message is on its way stays its own: the page's prompt waits in its own turn's section, and the other turn is not this page's to stop", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "two clients" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    // The page's `send` frame leaves only once another client's turn has started on the server and
    // its turn_start has reached the page.
    await page.evaluate(
      ({ id, key }) => {
        const w = window as unknown as { otherTurn?: string; myTurn?: string };
        const s = window.sockets.at(-1)!;
        const real = s.send.bind(s);
        s.addEventListener("message", (m) => {
          const f = JSON.parse(String(m.data));
          if (f.type === "accepted") w.myTurn = f.turnId;
        });
        s.send = (data: string) => {
          if (JSON.parse(data).type !== "send") return real(data);
          s.addEventListener("message", function started(m) {
            const f = JSON.parse(String(m.data));
            if (f.type !== "turn_start") return;
            s.removeEventListener("message", started);
            w.otherTurn = f.turnId;
            // After the page has handled that frame.
            setTimeout(() => real(data), 50);
          });
          void fetch(`/v1/conversations/${id}/messages`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ content: "another client's question\n@stream-pace 250\n@reply-chars 400" }),
          });
        };
      },
      { id, key: KEY },
    );
    await page.fill("#composer", "my own question\n@reply-chars 60");
    await page.press("#composer", "Enter");
    const other = await page.waitForFunction(() => (window as unknown as { otherTurn?: string }).otherTurn);
    const otherTurn = String(await other.jsonValue());
    // While the other turn streams: it has a section of its own, and the page's prompt is not in it.
    await page.waitForSelector(`section.turn[data-turn="${otherTurn}"] .msg.assistant .md`);
    expect(await page.locator(`section.turn[data-turn="${otherTurn}"]`).textContent()).not.toContain("my own question");
    expect(await page.locator(`section.turn[data-turn="${otherTurn}"][data-mine]`).count()).toBe(0);
    // The page's prompt waits in a section of its own turn, queued behind the other.
    const myTurn = String(
      await (await page.waitForFunction(() => (window as unknown as { myTurn?: string }).myTurn)).jsonValue(),
    );
    expect(await page.locator(`section.turn[data-turn="${myTurn}"][data-mine]`).textContent()).toContain(
      "my own question",
    );
    await settled(2);
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("an edit sent while a reply runs stays open with its text, through the re-render at the reply's end, then sends", async () => {
    const id = await newChat("First question.\n@reply-chars 40");
    await settled(1);
    await page.fill("#composer", "Second question.\n@reply-chars 30\n@stream-pace 400");
    await page.press("#composer", "Enter");
    await page.waitForSelector(".turn.live");
    await page.locator(".turn.done").first().locator(".msg.user button.edit").click();
    await page.fill(".edit-box", "My careful rewrite.");
    await page.click(".editor .resend");
    // Refused while the reply runs: the editor and its text stay.
    expect(await page.inputValue(".edit-box")).toBe("My careful rewrite.");
    await settled(2);
    expect(await page.inputValue(".edit-box")).toBe("My careful rewrite.");
    await page.click(".editor .resend");
    await settled(3);
    expect(
      (await transcript(id)).filter((m) => m.role === "user").map((m) => textBlocks(m.content).join("")),
    ).toContain("My careful rewrite.");
  });

  it("a file of a type the server cannot read is refused with a plain message, before any upload", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "refused file" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    let uploads = 0;
    page.on("request", (r) => r.url().includes("/attachments") && r.method() === "POST" && uploads++);
    await page.setInputFiles("#file-input", {
      name: "tool.exe",
      mimeType: "application/x-msdownload",
      buffer: Buffer.from("MZ\x90\x00binary"),
    });
    const refused = page.locator(".upload.refused");
    await refused.waitFor();
    expect(await refused.locator("[role=alert]").textContent()).toContain(
      "tool.exe can't be read here: use PDF, text, code, CSV, XLSX, DOCX or an image.",
    );
    expect(await page.locator(".upload.staged").count()).toBe(0);
    expect(await axe(page)).toEqual([]);
    await refused.locator("button.remove").click();
    expect(await page.locator(".upload").count()).toBe(0);
    expect(uploads).toBe(0);
    expect((await api("GET", `/v1/conversations/${id}/attachments`)).json.data).toEqual([]);
  });

  it("Send uploads the staged file and sends the turn with it: the message shows the file, the transcript has its note, the model reads it", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "send with file" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    const rows = Array.from({ length: 40 }, (_, i) => `line ${i + 1} pomelo${i + 1}`).join("\n");
    // A name with "&": the note escapes it for the model, the page shows it as written.
    await stageText("pomelo & co.txt", rows);
    await page.waitForSelector('.upload.staged:has-text("pomelo & co.txt")');
    await send("What does line 7 say?");
    expect(await page.locator(".upload").count()).toBe(0);
    const saved = await transcript(id);
    // One user message: the file's note first, then the text (no separate note message).
    expect(saved.filter((m) => m.role === "user")).toHaveLength(1);
    const note = saved[0].content[0].text as string;
    const attachment = /^<attachment id="(att_[^"]+)" name="pomelo &amp; co.txt">/.exec(note)?.[1];
    expect(attachment).toBeTruthy();
    expect(saved[0].content[1].text).toBe("What does line 7 say?");
    const chip = page.locator(".turn.done .msg.user .note.file-chip").last();
    expect(await chip.getAttribute("data-attachment")).toBe(attachment);
    expect(await chip.textContent()).toContain("pomelo & co.txt");
    expect(await chip.textContent()).not.toContain("&amp;");
    // The file's tools came with it: the model reads the file in the next turn.
    await send(`@tool file_read {"attachment_id":"${attachment}","lines":"7-7"}`);
    expect(JSON.stringify(await transcript(id))).toContain("line 7 pomelo7");
  });

  it("a file past the one-request size goes up in parts (R2 multipart), staged, and a cancel leaves nothing", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "upload in parts" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    const parts: string[] = [];
    const seen = (r: { url(): string; method(): string }) =>
      r.method() === "PUT" && r.url().includes("/attachments/uploads/") && parts.push(r.url());
    const started: Promise<string>[] = [];
    const starts = (r: { url(): string; request(): { method(): string }; json(): Promise<unknown> }) =>
      r.request().method() === "POST" &&
      r.url().endsWith("/attachments/uploads") &&
      started.push(r.json().then((j) => (j as { attachmentId: string }).attachmentId));
    page.on("request", seen);
    page.on("response", starts);
    try {
      // The same code the composer runs, with the thresholds lowered so a 6 MiB file takes two parts.
      const result = await page.evaluate(`(async () => {
        const { uploadAttachment } = await import("/js/api.js");
        const rows = Array.from({ length: 120000 }, (_, i) => "row " + i + " kumquat" + i).join("\\n");
        const bytes = new TextEncoder().encode(rows.padEnd(6 * 1024 * 1024 + 17, "."));
        const file = new File([bytes], "big.txt", { type: "text/plain" });
        const progress = [];
        const opts = { attach: false, multipartFrom: 1, partBytes: 5 * 1024 * 1024 };
        const up = uploadAttachment(${JSON.stringify(id)}, file, (sent, total) => progress.push([sent, total]), opts);
        const done = await up.done;
        const cancelled = uploadAttachment(${JSON.stringify(id)}, file, () => {}, opts);
        cancelled.abort();
        const error = await cancelled.done.then(() => null, (e) => e.type);
        return { done, size: file.size, last: progress[progress.length - 1], error };
      })()`);
      const { done, size, last, error } = result as {
        done: { id: string; size: number; note: string };
        size: number;
        last: [number, number];
        error: string | null;
      };
      expect(done.size).toBe(size);
      expect(done.note).toMatch(/^<attachment id="att_/);
      expect(last).toEqual([size, size]);
      expect(parts).toHaveLength(2);
      expect(error).toBe("aborted");
      // Staged: no note in the conversation, one attachment; the cancelled upload was aborted on the server.
      expect(await transcript(id)).toEqual([]);
      const listed = (await api("GET", `/v1/conversations/${id}/attachments`)).json.data as { id: string }[];
      expect(listed.map((a) => a.id)).toEqual([done.id]);
      const [first, second] = await Promise.all(started);
      expect(first).toBe(done.id);
      expect((await api("DELETE", `/v1/conversations/${id}/attachments/uploads/${second}`)).status).toBe(404);
    } finally {
      page.off("request", seen);
      page.off("response", starts);
    }
  });

  it("the new-chat composer sends on Enter while the model list is still loading", async () => {
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // Each held request goes on once the gate opens; unroute waits for them, so none is handled twice.
    const held: Promise<void>[] = [];
    await page.route("**/v1/models*", (route) => {
      const going = gate.then(() => route.continue());
      held.push(going);
      return going;
    });
    try {
      // A fresh page load: the model list is fetched once per page, and this one waits at the gate.
      await page.goto(`${base()}/#/`);
      await page.reload();
      await page.waitForSelector("#new-chat-form");
      expect(await page.locator("#new-model").count()).toBe(0); // the list has not arrived
      await page.fill("#composer", "Before the model list");
      await page.press("#composer", "Enter");
      await page.waitForURL(/#\/c\/conv_/);
    } finally {
      release();
      await Promise.all(held);
      await page.unroute("**/v1/models*");
    }
  });

  it("keeps the keyboard's place: Send hands the focus to Stop, Stop keeps it, the end of the turn gives it to the composer; the log is busy meanwhile", async () => {
    const id = await newChat("Warm up.\n@reply-chars 80");
    await settled(1);
    const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
    await page.fill("#composer", "Tell me at length.\n@reply-chars 3000\n@hold-stream after=300");
    await page.focus("#send");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#stop:not([hidden])");
    expect(await focused()).toBe("stop");
    expect(await page.getAttribute("#log", "aria-busy")).toBe("true");
    await page.keyboard.press("Enter"); // Stop, from the keyboard
    expect(await focused()).toBe("stop");
    await settled(2);
    expect(await focused()).toBe("composer");
    expect(await page.getAttribute("#log", "aria-busy")).toBe("false");
    // The skip link goes to the view and stays in this conversation.
    await page.evaluate(() => (document.querySelector(".skip-link") as HTMLElement).focus());
    await page.keyboard.press("Enter");
    expect(page.url()).toContain(`#/c/${id}`);
    expect(await focused()).toBe("view");
    expect(await page.locator("#composer").count()).toBe(1);
  });

  it("a failed turn says what happened in plain words and offers Retry, which sends it again", async () => {
    const id = await newChat("Is it busy?\n@model-error 529");
    await page.waitForSelector(".turn-error");
    const error = page.locator(".turn-error").last();
    expect(await error.textContent()).toContain("The model is overloaded right now");
    // Said once, through the status line: not an alert read again each time the transcript is drawn.
    expect(await error.getAttribute("role")).toBeNull();
    expect(await error.textContent()).not.toContain("{");
    await page.screenshot({ path: `${SHOTS}error.png` });
    const before = (await transcript(id)).filter((m) => m.role === "user").length;
    await error.locator("button.retry").click();
    await expect
      .poll(async () => (await transcript(id)).filter((m) => m.role === "user").length, { timeout: 60_000 })
      .toBe(before + 1);
  });

  it("the sidebar lists chats by last activity, as the server orders them, and renames and deletes them", async () => {
    const listed: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (new URL(r.url()).pathname === "/v1/conversations" && r.url().includes("?"))
        listed.push(new URL(r.url()).search);
    };
    page.on("request", onRequest);
    const older = (await api("POST", "/v1/conversations", { title: "Older chat" })).json.id;
    const newer = (await api("POST", "/v1/conversations", { title: "Newer chat" })).json.id;
    // Activity on the older chat moves it above the newer one.
    await api("POST", `/v1/conversations/${older}/messages`, { content: "wake up" });
    await page.goto(`${base()}/#/`);
    await page.reload();
    await page.waitForSelector(`#conversation-list li[data-id="${newer}"]`);
    const ids = () =>
      page.locator("#conversation-list li").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id));
    const order = await ids();
    expect(order.indexOf(older)).toBeLessThan(order.indexOf(newer));
    // Sending in the chat below moves it to the top of the sidebar, without a reload.
    await page.goto(`${base()}/#/c/${newer}`);
    await expect.poll(() => page.locator("#chat-title").textContent()).toBe("Newer chat");
    // The view has loaded (its empty-chat hint) and its socket is open before the composer is used.
    await page.getByText("Ask anything, or attach a file.").waitFor();
    await page.waitForFunction(() =>
      (window as unknown as { sockets: WebSocket[] }).sockets.some((s) => s.readyState === 1 && s.url.includes("/ws")),
    );
    await send("Back to this one.\n@reply-chars 80");
    await expect.poll(async () => (await ids())[0], { timeout: 15_000 }).toBe(newer);
    expect((await ids()).indexOf(older)).toBeGreaterThan(0);
    // The sidebar asked the server for that order: it sorts nothing itself.
    page.off("request", onRequest);
    expect(listed.length).toBeGreaterThan(0);
    expect(
      listed.filter((q) => /[?&]limit=100\b/.test(q)).every((q) => new URLSearchParams(q).get("order") === "activity"),
    ).toBe(true);

    const item = page.locator(`#conversation-list li[data-id="${newer}"]`);
    await item.hover();
    await item.locator("button.rename").click();
    await item.locator("input.rename-input").fill("Renamed in the sidebar");
    await item.locator("input.rename-input").press("Enter");
    await expect
      .poll(() => page.locator(`#conversation-list li[data-id="${newer}"] .conv-link`).textContent())
      .toBe("Renamed in the sidebar");
    expect((await api("GET", `/v1/conversations/${newer}`)).json.title).toBe("Renamed in the sidebar");
    // A rename from another client reaches the open chat over its socket: heading and sidebar, no reload.
    expect((await api("PATCH", `/v1/conversations/${newer}`, { title: "Renamed elsewhere" })).status).toBe(200);
    await expect.poll(() => page.locator("#chat-title").textContent()).toBe("Renamed elsewhere");
    await expect
      .poll(() => page.locator(`#conversation-list li[data-id="${newer}"] .conv-link`).textContent())
      .toBe("Renamed elsewhere");

    await page.locator(`#conversation-list li[data-id="${newer}"]`).hover();
    const focusedClass = () => page.evaluate(() => document.activeElement?.className ?? "");
    // The confirmation takes the focus; Escape keeps the chat and gives it back to Delete.
    await page.locator(`#conversation-list li[data-id="${newer}"] button.delete`).click();
    expect(await focusedClass()).toContain("confirm-delete");
    await page.keyboard.press("Escape");
    expect(await focusedClass()).toContain("delete");
    expect(await page.locator(`#conversation-list li[data-id="${newer}"] button.confirm-delete`).count()).toBe(0);
    await page.locator(`#conversation-list li[data-id="${newer}"] button.delete`).click();
    await page.screenshot({ path: `${SHOTS}sidebar-delete.png` });
    await page.keyboard.press("Enter");
    await page.waitForSelector(`#conversation-list li[data-id="${newer}"]`, { state: "detached" });
    // Never back to the top of the page, also once the list has been drawn again.
    expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe("BODY");
    await page.waitForTimeout(1_000);
    expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe("BODY");
    expect((await api("GET", `/v1/conversations/${newer}`)).status).toBe(404);
  });

  it("settings are a form: the model list comes from the API, and a change is saved", async () => {
    const models = (await api("GET", "/v1/models")).json.data.filter((m) => m.status !== "retired");
    await page.goto(`${base()}/#/c/${markdownId}/settings`);
    await page.waitForSelector("#settings-form");
    expect(await page.locator("#set-model option").count()).toBe(models.length);
    await page.selectOption("#set-display", "omitted");
    await page.click("#settings-form button[type=submit]");
    await expect.poll(() => page.locator("#settings-status").textContent()).toBe("Saved.");
    expect((await api("GET", `/v1/conversations/${markdownId}`)).json.settings.thinkingDisplay).toBe("omitted");
  });

  it("a dropped connection shows a banner with a countdown, and the chat reconnects", async () => {
    await page.goto(`${base()}/#/c/${markdownId}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.waitForSelector("#conn-banner:not([hidden])");
    expect(await page.locator("#conn-banner").textContent()).toMatch(/Connection lost\. Reconnecting in \d+ s/);
    await page.screenshot({ path: `${SHOTS}offline.png` });
    await page.click("#reconnect-now");
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    expect(await page.locator("#conn-banner").isHidden()).toBe(true);
  });

  it("a connection dropped mid-reply comes back with the reply so far and Stop; a reload mid-reply too", async () => {
    const id = await newChat("Name a lake.\n@reply-chars 60");
    await settled(1);
    await page.fill("#composer", "Tell me about it.\n@reply-chars 3000\n@hold-stream after=300");
    await page.press("#composer", "Enter");
    await page.waitForFunction(() => (document.querySelector(".turn.live .md")?.textContent?.length ?? 0) > 250);
    // The stream holds: what is on screen now is all it sent.
    await page.waitForTimeout(300);
    const streamed = await page.locator(".turn.live .md").textContent();
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.waitForSelector("#conn-banner:not([hidden])");
    await page.click("#reconnect-now");
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    await page.waitForFunction((text) => document.querySelector(".turn.live .md")?.textContent === text, streamed);
    expect(await page.locator("#stop").isVisible()).toBe(true);
    expect(await page.locator(".turn.live").count()).toBe(1);
    // A reload: the page opens on the running turn, with Stop.
    await page.reload();
    await page.waitForFunction((text) => document.querySelector(".turn.live .md")?.textContent === text, streamed);
    await page.waitForSelector("#stop:not([hidden])");
    await page.click("#stop");
    await settled(2);
    const saved = await transcript(id);
    expect(saved.at(-1)).toMatchObject({ role: "assistant", stopReason: "interrupted" });
    expect(saved.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("a reconnect while a message's file uploads keeps Stop: Enter again sends nothing twice", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "upload reconnect" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    let uploads = 0;
    await page.route(/\/attachments\?/, async (route) => {
      uploads++;
      await new Promise((r) => setTimeout(r, 3000));
      await route.continue();
    });
    await stageText("notes.txt", "notes");
    await page.fill("#composer", "Read my notes.\n@reply-chars 40");
    await page.press("#composer", "Enter");
    await page.waitForSelector("#stop:not([hidden])");
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.click("#reconnect-now");
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    expect(await page.locator("#send").isVisible()).toBe(false);
    await page.press("#composer", "Enter");
    await expect.poll(async () => (await transcript(id)).at(-1)?.role, { timeout: 30_000 }).toBe("assistant");
    await page.unroute(/\/attachments\?/);
    expect(uploads).toBe(1);
    expect(
      (await transcript(id)).filter(
        (m) => m.role === "user" && textBlocks(m.content).join("").includes("Read my notes"),
      ),
    ).toHaveLength(1);
  });

  it("Stop pressed while a message's files upload sends nothing: the message stays in the composer", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "stop during upload" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    await page.route(/\/attachments\?/, async (route) => {
      await new Promise((r) => setTimeout(r, 3000));
      await route.continue().catch(() => {});
    });
    await stageText("later.txt", "later");
    await page.fill("#composer", "Never mind.\n@reply-chars 40");
    await page.press("#composer", "Enter");
    await page.waitForSelector("#stop:not([hidden])");
    await page.click("#stop");
    await page.waitForSelector("#send:not([hidden])");
    await page.unroute(/\/attachments\?/);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await transcript(id)).toEqual([]);
    expect(await page.inputValue("#composer")).toBe("Never mind.\n@reply-chars 40");
    await page.fill("#composer", "");
    await page
      .locator(".upload .remove")
      .first()
      .click()
      .catch(() => {});
  });

  it("a client-tool panel answered elsewhere while the socket was down goes at the reconnect", async () => {
    const { id, paused } = await openPausedChat("stale panel");
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await page.route("**/ws-ticket", async (route) => (await gate, route.continue()));
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    const call = paused.requires_action!.calls[0].id;
    expect(
      (await api("POST", `/v1/conversations/${id}/tool-results`, { results: [{ tool_use_id: call, content: "teal" }] }))
        .status,
    ).toBe(200);
    release();
    await page.click("#reconnect-now").catch(() => {});
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    await page.unroute("**/ws-ticket");
    await page.waitForSelector("#pending-calls", { state: "detached" });
  });

  it("a 429 says how long to wait, from the server's Retry-After", async () => {
    await page.goto(`${base()}/#/`);
    await page.waitForSelector("#new-chat-form");
    await page.route("**/v1/conversations", (route) =>
      route.request().method() === "POST"
        ? route.fulfill({
            status: 429,
            headers: { "content-type": "application/json", "retry-after": "42" },
            body: JSON.stringify({ error: { type: "rate_limited", message: "over the limit; retry in 42 s" } }),
          })
        : route.continue(),
    );
    await page.fill("#composer", "hello");
    await page.press("#composer", "Enter");
    const line = page.locator("#new-chat-form .error-line");
    await line.waitFor();
    await page.unroute("**/v1/conversations");
    expect(await line.textContent()).toContain("Try again in 42 s.");
  });

  it("a key revoked mid-session brings the sign-in form up, saying why; 'stay signed in' keeps the key across tabs", async () => {
    const created = await api("POST", "/v1/keys", { name: "ui revoke test" });
    expect(created.status).toBe(201);
    const other = await browser.newContext({ viewport: DESKTOP });
    const p = await other.newPage();
    await signIn(p, created.json.apiKey, true);
    expect(await p.evaluate(() => localStorage.getItem("context-chat.apiKey"))).toBe(created.json.apiKey);
    // A second tab of the same browser is signed in already.
    const tab = await other.newPage();
    await tab.goto(`${base()}/#/manage`);
    await tab.waitForSelector("#conversations");
    await tab.close();
    expect((await api("DELETE", `/v1/keys/${created.json.key.id}`)).status).toBe(200);
    await p.goto(`${base()}/#/manage`);
    await p.waitForSelector("#signin-form");
    expect(await p.locator("#signin-form .notice").textContent()).toContain("revoked or expired");
    expect(await p.locator("#view").textContent()).not.toContain("missing or invalid API key");
    expect(
      await p.evaluate(() => [
        sessionStorage.getItem("context-chat.apiKey"),
        localStorage.getItem("context-chat.apiKey"),
      ]),
    ).toEqual([null, null]);
    await p.screenshot({ path: `${SHOTS}signed-out.png` });
    await other.close();
  });

  it("a message being sent when the key is refused waits in the composer through the sign-in", async () => {
    const created = await api("POST", "/v1/keys", { name: "ui draft test" });
    const other = await browser.newContext({ viewport: DESKTOP });
    const p = await other.newPage();
    await signIn(p, created.json.apiKey);
    await p.fill("#composer", "First.\n@reply-chars 40");
    await p.press("#composer", "Enter");
    await p.waitForURL(/#\/c\/conv_/);
    await p.waitForSelector(".turn.done");
    const at = p.url();
    // What the page does in the background after a turn must not meet the revoked key before the
    // send does: the title comes (by the socket, whose key is checked again then) before the key
    // goes, and the listing's later refreshes are read with the key that stays.
    await expect.poll(() => p.locator("#chat-title").textContent(), { timeout: 15_000 }).not.toBe("New chat");
    const isBackgroundRead = (url: URL) => url.pathname.startsWith("/v1/conversations");
    await p.route(isBackgroundRead, (route) =>
      route.request().method() === "GET"
        ? route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${KEY}` } })
        : route.continue(),
    );
    expect((await api("DELETE", `/v1/keys/${created.json.key.id}`)).status).toBe(200);
    await p.fill("#composer", "A long question I took a while to write.");
    await p.press("#composer", "Enter");
    await p.waitForSelector("#signin-form");
    await p.unroute(isBackgroundRead);
    await p.fill("#api-key", KEY);
    await p.click("#signin-form button[type=submit]");
    await p.waitForSelector(".log");
    expect(p.url()).toBe(at);
    await expect.poll(() => p.inputValue("#composer")).toBe("A long question I took a while to write.");
    // A visit elsewhere keeps it too, and it is taken once.
    await p.fill("#composer", "Half a thought");
    await p.goto(`${base()}/#/`);
    await p.waitForSelector("#new-chat-form");
    await p.goto(at);
    await expect.poll(() => p.inputValue("#composer")).toBe("Half a thought");
    await other.close();
  });

  it("the theme toggle switches and remembers the theme", async () => {
    await page.goto(`${base()}/#/`);
    const before = await page.evaluate(() => document.documentElement.dataset.theme);
    await page.click("#theme-toggle");
    const after = await page.evaluate(() => document.documentElement.dataset.theme);
    expect(after).not.toBe(before);
    await page.reload();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(after);
    await page.click("#theme-toggle");
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(before);
  });

  it("every page passes axe (no serious or critical violations) at desktop and phone width, light and dark; screenshots kept", async () => {
    const chatId = markdownId;
    const pages: [string, string][] = [
      ["home", "#/"],
      ["chat", `#/c/${chatId}`],
      ["settings", `#/c/${chatId}/settings`],
      ["history", `#/c/${chatId}/history`],
      ["replay", `#/c/${chatId}/replay`],
      ["search", "#/search?q=plan"],
      ["manage", "#/manage"],
    ];
    const problems: string[] = [];
    for (const theme of ["light", "dark"]) {
      for (const [size, viewport] of Object.entries({ desktop: DESKTOP, phone: PHONE })) {
        const ctx = await browser.newContext({ viewport, colorScheme: theme as "light" | "dark" });
        const p = await ctx.newPage();
        await p.goto(`${base()}/`);
        await p.waitForSelector("#signin-form");
        problems.push(...(await axe(p)).map((v) => `signin ${size} ${theme}: ${v}`));
        await p.screenshot({ path: `${SHOTS}signin-${size}-${theme}.png` });
        await signIn(p);
        for (const [name, hash] of pages) {
          await p.goto(`${base()}/${hash}`);
          await p.waitForLoadState("networkidle");
          await p.waitForTimeout(300);
          problems.push(...(await axe(p)).map((v) => `${name} ${size} ${theme}: ${v}`));
          // Nothing runs off a phone's screen sideways.
          if (size === "phone")
            expect(
              await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth + 1),
              `${name} fits the phone's width`,
            ).toBe(true);
          await p.screenshot({ path: `${SHOTS}${name}-${size}-${theme}.png` });
        }
        if (size === "phone") {
          // The header keeps the search box usable; the sidebar opens from the menu button.
          expect(await p.locator("#search-q").evaluate((el) => el.getBoundingClientRect().width)).toBeGreaterThan(100);
          expect(await p.locator(".top").evaluate((el) => el.getBoundingClientRect().height)).toBeLessThan(60);
          await p.click("#sidebar-toggle");
          await p.waitForSelector("#new-chat", { state: "visible" });
          problems.push(...(await axe(p)).map((v) => `sidebar ${size} ${theme}: ${v}`));
          await p.screenshot({ path: `${SHOTS}sidebar-${size}-${theme}.png` });
        }
        await ctx.close();
      }
    }
    expect(problems).toEqual([]);
  });

  it("the transcript is a log that is not read out token by token; only a small status region is live", async () => {
    await page.goto(`${base()}/#/c/${markdownId}`);
    await page.waitForSelector("#log");
    expect(await page.locator("#log").getAttribute("role")).toBe("log");
    expect(await page.locator("#log").getAttribute("aria-live")).toBe("off");
    expect(await page.locator("main").getAttribute("aria-live")).toBeNull();
    expect(await page.locator("[aria-live=polite]").evaluateAll((els) => els.map((e) => e.id))).toEqual(["announcer"]);
  });
});

describe("the chat keeps what was typed and where the reader was", () => {
  it("a send the server refuses leaves the page idle with the message back in the composer: a turn paused on a client tool, then a rate limit", async () => {
    const { id, paused } = await openPausedChat("refused sends");
    const typed = "my long carefully typed follow-up question";
    await page.fill("#composer", typed);
    await page.press("#composer", "Enter");
    await page.waitForSelector(".turn-error");
    await page.waitForSelector("#send:not([hidden])", { timeout: 5_000 });
    expect(await page.inputValue("#composer")).toBe(typed);
    expect(await page.locator("#stop").isHidden()).toBe(true);
    expect(await page.locator(".turn.live").count()).toBe(0);
    // The call answered (elsewhere), the message sends as it is.
    const call = paused.requires_action!.calls[0].id;
    await api("POST", `/v1/conversations/${id}/tool-results`, { results: [{ tool_use_id: call, content: "teal" }] });
    await page.waitForSelector("#pending-calls", { state: "detached" });
    // A refusal frame as the server sends one when the key is over its turn limit, then the real send.
    await page.evaluate(() => {
      const s = window.sockets.at(-1)!;
      const real = s.send.bind(s);
      const w = window as unknown as { sendFrames: number };
      w.sendFrames = 0;
      s.send = (data: string) => {
        const frame = JSON.parse(data);
        if (frame.type === "send" && w.sendFrames++ === 0) {
          const refusal = {
            type: "error",
            turnId: "turn_refused",
            ref: frame.ref,
            error: { type: "rate_limited", message: "Too many turns; retry in 1 s.", retryAfterSeconds: 1 },
          };
          setTimeout(() => s.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(refusal) })));
          return;
        }
        real(data);
      };
    });
    await page.press("#composer", "Enter");
    await page.waitForFunction(() => (window as unknown as { sendFrames: number }).sendFrames === 1);
    await page.waitForSelector("#send:not([hidden])", { timeout: 5_000 });
    expect(await page.inputValue("#composer")).toBe(typed);
    await page.press("#composer", "Enter");
    await expect.poll(async () => (await transcript(id)).at(-1)?.role, { timeout: 30_000 }).toBe("assistant");
    const prompts = (await transcript(id)).filter((m) => m.role === "user" && textBlocks(m.content).join("") === typed);
    expect(prompts).toHaveLength(1);
    expect(await page.evaluate(() => (window as unknown as { sendFrames: number }).sendFrames)).toBe(2);
  });

  it("a message the dropped socket lost comes back ahead of what was typed while it reconnected", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "lost send, typed over" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await page.route("**/ws-ticket", async (route) => (await gate, route.continue()));
    await closeSocketOnSend();
    await page.fill("#composer", "a message the network ate");
    await page.press("#composer", "Enter");
    await page.waitForSelector("#conn-banner:not([hidden])");
    await page.waitForFunction(() => (document.querySelector("#composer") as HTMLTextAreaElement).value === "");
    await page.fill("#composer", "and a thought typed meanwhile");
    release();
    await page.click("#reconnect-now").catch(() => {});
    await expect
      .poll(() => page.inputValue("#composer"), { timeout: 15_000 })
      .toBe("a message the network ate\n\nand a thought typed meanwhile");
    await page.unroute("**/ws-ticket");
    await page.fill("#composer", "");
  });

  it("Stop pressed while the connection is down stops the turn once it is back", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "stop offline" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    await page.fill("#composer", "a long answer please\n@stream-pace 300\n@reply-chars 1500");
    await page.press("#composer", "Enter");
    await page.locator(".turn.live .md").waitFor();
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await page.route("**/ws-ticket", async (route) => (await gate, route.continue()));
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.waitForSelector("#conn-banner:not([hidden])");
    await page.click("#stop");
    release();
    await page.click("#reconnect-now").catch(() => {});
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    await page.unroute("**/ws-ticket");
    await expect.poll(async () => (await transcript(id)).at(-1)?.stopReason, { timeout: 90_000 }).toBeTruthy();
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "interrupted" });
    await settled(1);
  });

  it("the same prompt sent twice in a row shows two exchanges, not a regenerate", async () => {
    const imported = await api("POST", "/v1/conversations/import?title=Twice", {
      messages: [
        { role: "user", content: "continue" },
        { role: "assistant", content: "FIRST PART of the story." },
        { role: "user", content: "continue" },
        { role: "assistant", content: "SECOND PART of the story." },
      ],
    });
    expect(imported.status).toBe(201);
    await page.goto(`${base()}/#/c/${imported.json.id}`);
    await page.locator(".turn.done").first().waitFor();
    expect(await page.locator(".turn.done").count()).toBe(2);
    expect(await page.locator(".version-count").count()).toBe(0);
    expect(await page.locator(".turn.done .msg.assistant .md").allTextContents()).toEqual([
      "FIRST PART of the story.",
      "SECOND PART of the story.",
    ]);
  });

  it("a re-render at the end of a turn keeps the keyboard focus where it was and opened steps open", async () => {
    const imported = await api("POST", "/v1/conversations/import?title=Focus%20kept", {
      messages: [
        { role: "user", content: "look it up" },
        { role: "assistant", content: [{ type: "tool_use", id: "call_k", name: "memory_search", input: { q: "x" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_k", content: "found it" }] },
        { role: "assistant", content: "Here it is." },
      ],
    });
    const id = imported.json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    await page.click('.turn.done details.tool-step[data-tool-use="call_k"] > summary');
    await page.focus(".turn.done .msg.assistant button.copy");
    // Another client's turn: its end re-renders the transcript.
    expect((await api("POST", `/v1/conversations/${id}/messages`, { content: "more\n@reply-chars 40" })).status).toBe(
      200,
    );
    await settled(2);
    expect(
      await page.locator('details.tool-step[data-tool-use="call_k"]').evaluate((d) => d.hasAttribute("open")),
    ).toBe(true);
    expect(
      await page.evaluate(() => {
        const a = document.activeElement;
        return a?.matches(".turn.done:first-child .msg.assistant button.copy") ?? false;
      }),
    ).toBe(true);
  });

  it("a file that fails midway through an upload: sending again does not upload the earlier files twice", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "partial upload" })).json.id;
    await page.goto(`${base()}/#/c/${id}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    let failing = true;
    await page.route(/\/attachments\?name=second\.txt/, (route) =>
      failing
        ? route.fulfill({
            status: 503,
            contentType: "application/json",
            body: '{"error":{"type":"unavailable","message":"down"}}',
          })
        : route.continue(),
    );
    await page.setInputFiles("#file-input", [
      { name: "first.txt", mimeType: "text/plain", buffer: Buffer.from("one\n") },
      { name: "second.txt", mimeType: "text/plain", buffer: Buffer.from("two\n") },
    ]);
    await page.fill("#composer", "read both\n@reply-chars 40");
    await page.press("#composer", "Enter");
    await page.waitForSelector(".upload.failed");
    await page.waitForSelector("#send:not([hidden])");
    failing = false;
    await page.press("#composer", "Enter");
    await settled(1);
    await page.unroute(/\/attachments\?name=second\.txt/);
    const files = (await api("GET", `/v1/conversations/${id}/attachments`)).json.data;
    expect(files.map((f) => String(f.name)).sort()).toEqual(["first.txt", "second.txt"]);
  });
});
