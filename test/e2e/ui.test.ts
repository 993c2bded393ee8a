// The web UI in a real browser: Chromium (see ./browser.ts for which) driven by playwright-core against the running
// stack. Sign in, chat with a streamed reply, an upload and its note, a compaction card on a small
// window, History with every message (and a fold), search into History, the replay view, and a
// paused turn's client tool calls answered by hand.
// Screenshots of the main views land in test-artifacts/ui/.
import { mkdirSync } from "node:fs";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium, keepSockets } from "./browser";
import type { Routes, Schemas, ServerFrame } from "../../client";
import { api, base, KEY, newConversation, textBlocks, transcript } from "./client";

const SHOTS = new URL("../../test-artifacts/ui/", import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let browser: Browser;
let page: Page;
/** Every websocket frame the page received, parsed. */
const frames: ServerFrame[] = [];

async function shot(name: string) {
  // From the top, so the sticky header is not painted over the middle of a full-page capture.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

async function signIn(p: Page) {
  await p.goto(`${base()}/`);
  await p.fill("#api-key", KEY);
  await p.click("#signin-form button[type=submit]");
  await p.waitForSelector("#new-chat-form");
}

async function startConversation(title: string, settings?: Record<string, unknown>): Promise<string> {
  const id = (await api("POST", "/v1/conversations", { title, ...(settings ? { settings } : {}) })).json.id;
  await page.goto(`${base()}/#/c/${id}`);
  await page.waitForSelector("#socket-status.live", { state: "attached" });
  return id;
}

async function send(text: string) {
  const before = await page.locator(".turn.done").count();
  await page.fill("#composer", text);
  await page.click("#send");
  await page.waitForFunction((n) => document.querySelectorAll(".turn.done").length > n, before, { timeout: 90_000 });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.setDefaultTimeout(20_000);
  // Keep the page's sockets reachable, so a test can drop one as a network would.
  await keepSockets(page);
  page.on("websocket", (ws) => ws.on("framereceived", (f) => frames.push(JSON.parse(String(f.payload)))));
  page.on("pageerror", (err) => console.error("page error:", err));
});

afterAll(async () => {
  await browser?.close();
});

describe("the web UI", () => {
  let chatId: string;
  let smallId: string;

  it("serves the page from the edge and signs in with a key kept in session storage only", async () => {
    const res = await page.goto(`${base()}/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.fill("#api-key", "not-a-key");
    await page.click("#signin-form button[type=submit]");
    await page.waitForSelector("#signin-form .error-line");
    await shot("signin");
    await signIn(page);
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem("context-chat.apiKey"),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(stored).toEqual({ session: KEY, local: 0, cookie: "" });
    expect(page.url()).not.toContain(KEY);
  });

  it("starts a conversation, streams the reply over the websocket, and reconnects with a fresh ticket", async () => {
    chatId = await startConversation("ui chat");
    await send("hello from the browser\n@reply-chars 1200");
    const deltas = frames.filter((f) => f.type === "delta");
    expect(deltas.length).toBeGreaterThan(1);
    const reply = (await page.locator(".turn.done .msg.assistant .md").last().textContent())!;
    expect(reply.length).toBeGreaterThan(800);
    // Rendered as markdown: paragraphs are blocks, so only the whitespace between them differs.
    expect(reply.replace(/\s+/g, "")).toBe(
      deltas
        .map((d) => d.text)
        .join("")
        .replace(/\s+/g, ""),
    );
    expect(await page.locator(".turn.done .msg.user").last().textContent()).toContain("hello from the browser");
    // The model's thinking streams in as its own events and stays collapsed, apart from the reply.
    const thought = frames
      .filter((f) => f.type === "thinking")
      .map((f) => f.text)
      .join("");
    expect(thought.length).toBeGreaterThan(0);
    const thinking = page.locator(".turn.done details.thinking").last();
    expect(await thinking.getAttribute("open")).toBeNull();
    expect(await thinking.locator(".thinking-text").textContent()).toBe(thought);
    expect(reply).not.toContain(thought);
    // A tool call and its result are one collapsed step ("Used conversation_read"), with the
    // result's size in the developer view.
    await send('look back\n@tool conversation_read {"from_seq":1,"to_seq":2}');
    const call = page.locator(".turn.done details.tool-step").last();
    await expect.poll(() => call.locator("summary").textContent()).toMatch(/^Used conversation_read\s+[\d.,K]+ chars$/);
    expect(await call.getAttribute("open")).toBeNull();
    expect((await call.locator(".step-result pre").textContent())!.length).toBeGreaterThan(100);
    // One assistant block for the whole turn: the call, its result and the answer.
    expect(await page.locator(".turn.done").last().locator(".msg.assistant").count()).toBe(1);
    expect(
      await page
        .locator(".turn.done")
        .last()
        .locator("details.thinking .thinking-text", { hasText: "Calling 1 tool: conversation_read" })
        .count(),
    ).toBe(1);
    await shot("chat");
    // A dropped socket comes back with a fresh single-use ticket, and turns go on.
    const sockets = await page.evaluate(() => window.sockets.length);
    await page.evaluate(() => window.sockets.at(-1)?.close());
    await page.waitForFunction(
      (n) => window.sockets.length > n && document.querySelector("#socket-status.live"),
      sockets,
    );
    await send("after a reconnect\n@reply-chars 300");
    expect(await page.locator(".turn.done .msg.user").last().textContent()).toContain("after a reconnect");
    expect((await page.locator(".turn.done .msg.assistant .md").last().textContent())!.length).toBeGreaterThan(150);
    expect(await page.locator(".turn.interrupted").count()).toBe(0);
  });

  it("stages a dropped file, uploads it with progress on Send, shows its note in the message, and shows a compaction card on a small window", async () => {
    smallId = await startConversation("ui compaction", { contextWindowTokens: 24_000, outputReserveTokens: 2_000 });
    // A real drop event carrying a file, as the browser makes for a drag from the desktop.
    await page.evaluate(() => {
      const rows = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
      const dt = new DataTransfer();
      dt.items.add(new File([rows], "rows.txt", { type: "text/plain" }));
      const chat = document.getElementById("chat")!;
      chat.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt, bubbles: true, cancelable: true }));
      chat.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    // Staged, not uploaded: a chip until the message is sent.
    await page.waitForSelector('.upload.staged:has-text("rows.txt")');
    expect(await page.locator(".upload progress").count()).toBe(0);
    // On Send the chip's bar is sized by the XHR's progress events (it starts at max 1) and ends full.
    await page.evaluate(() => {
      const w = window as unknown as { bars: { value: number; max: number }[] };
      w.bars = [];
      new MutationObserver(() => {
        for (const p of document.querySelectorAll<HTMLProgressElement>(".upload progress"))
          w.bars.push({ value: p.value, max: p.max });
      }).observe(document.getElementById("uploads")!, { subtree: true, childList: true, attributes: true });
    });
    await send("here is the log");
    const bars = await page.evaluate(() => (window as unknown as { bars: { value: number; max: number }[] }).bars);
    const last = bars[bars.length - 1];
    expect(last.max).toBeGreaterThan(300_000);
    expect(last.value).toBe(last.max);
    expect(await page.locator(".upload").count()).toBe(0);
    // The note is a file chip in the message (name, type, lines); what the model reads is in the developer view.
    const note = page.locator('.msg.user .note:has-text("rows.txt")');
    await note.waitFor({ timeout: 30_000 });
    const attachment = await note.getAttribute("data-attachment");
    expect(attachment).toMatch(/^att_/);
    expect(await note.textContent()).toMatch(/rows\.txt.*text\/plain.*5,000 lines/);
    expect(await note.textContent()).not.toContain(attachment);
    expect(await page.locator('.msg.user:has-text("rows.txt") .note-raw pre').textContent()).toMatch(/file_read/);
    await shot("upload");

    // The pulsing card is replaced by the finished one.
    await page.evaluate(() => {
      const w = window;
      w.sawRunningCard = false;
      new MutationObserver(() => {
        if (document.querySelector(".compaction-notice.running")) w.sawRunningCard = true;
      }).observe(document.body, { childList: true, subtree: true });
    });
    const calls = Array.from(
      { length: 10 },
      (_, i) => `@tool file_read {"attachment_id":"${attachment}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
    ).join("\n");
    await send(`read all ten slices\n${calls}`);
    expect(frames.some((f) => f.type === "compaction_started")).toBe(true);
    expect(await page.evaluate(() => window.sawRunningCard)).toBe(true);
    expect(await page.locator(".compaction-notice.running").count()).toBe(0);
    // A one-line notice that opens to the card, kept where the pass ran once the turn is saved.
    const notice = page.locator(".turn.done details.compaction-notice").last();
    await notice.waitFor();
    expect(await notice.locator("> summary").textContent()).toMatch(
      /^Older context was compacted to make room \([\d,]+ tokens saved\)$/,
    );
    await notice.locator("> summary").click();
    const card = notice.locator(".card.compaction.done");
    const saved = Number((await card.locator(".saved").textContent())!.replace(/,/g, ""));
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBe(frames.find((f) => f.type === "compaction")?.tokensSaved);
    expect(Number(await card.locator(".targets").textContent())).toBeGreaterThan(0);
    expect(await page.locator(".turn.done .step-result").count()).toBeGreaterThanOrEqual(10);
    await card.scrollIntoViewIfNeeded();
    await shot("compaction");
  });

  it("narrates a long read: a picked PDF's first search reports its indexing progress", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 60; i++)
      doc.addPage([300, 200]).drawText(`page ${i} medlar${i}`, { x: 20, y: 100, font, size: 12 });
    await page.goto(`${base()}/#/c/${chatId}`);
    await page.waitForSelector("#socket-status.live", { state: "attached" });
    await page.setInputFiles("#file-input", {
      name: "medlar.pdf",
      mimeType: "application/pdf",
      buffer: Buffer.from(await doc.save()),
    });
    await send("Here is a PDF.");
    const note = page.locator('.msg.user .note:has-text("medlar.pdf")');
    await note.waitFor();
    expect(await note.textContent()).toContain("60 pages");
    await send(`@tool pdf_search {"attachment_id":"${await note.getAttribute("data-attachment")}","query":"medlar42"}`);
    const narration = page.locator(".turn.done details.narration").last();
    expect(await narration.locator("summary").textContent()).toMatch(/\d+ progress notes?/);
    expect(await narration.locator(".progress").first().textContent()).toContain(
      "First search of medlar.pdf (60 pages)",
    );
    await narration.locator("summary").click();
    await narration.scrollIntoViewIfNeeded();
    await shot("narration");
  });

  it("History shows every message, untouched, with the kept compaction card", async () => {
    await page.goto(`${base()}/#/c/${smallId}`);
    await page.click('.chat-head a:has-text("History")');
    await page.waitForSelector("#history .end");
    expect(page.url()).toContain(`#/c/${smallId}/history`);
    const all = await transcript(smallId);
    const ids = await page
      .locator("#history article.msg")
      .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id));
    expect(ids).toEqual(all.map((m) => m.id));
    // Results are the stored originals: a long one shows its head, and "Show all" puts the rest in
    // (inside a closed <details>, so clicked from the page).
    const showAll = page.locator("#history details.tool-result .show-all");
    expect(await showAll.count()).toBeGreaterThan(0);
    await showAll.first().evaluate((b) => (b as HTMLButtonElement).click());
    const longest = await page
      .locator("#history details.tool-result pre")
      .evaluateAll((els) => Math.max(...els.map((e) => e.textContent!.length)));
    expect(longest).toBeGreaterThan(20_000);
    expect(await page.locator("#history .card.compaction.done").count()).toBe(1);
    await shot("history");
    // Two messages a page: the pages load on as the reader reaches the end.
    await page.goto(`${base()}/#/c/${smallId}/history?limit=2`);
    await page.waitForSelector("#history article.msg");
    await expect
      .poll(async () => {
        // The view scrolls inside <main>, below the fixed header.
        if (await page.locator("#history-more").isVisible())
          await page.evaluate(() => document.getElementById("view")!.scrollTo(0, 1e9));
        return page.locator("#history .end").count();
      })
      .toBe(1);
    expect(
      await page.locator("#history article.msg").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id)),
    ).toEqual(all.map((m) => m.id));
  });

  it("History tags a sub-agent's steps (workflow mode)", async () => {
    const id = await newConversation();
    await api("POST", `/v1/conversations/${id}/messages`, { content: `@tool tool_activate {"name":"agent_delegate"}` });
    await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool agent_delegate ${JSON.stringify({ name: "reader", task: "Look it up.\n@reply-chars 300" })}`,
    });
    const agentIds = (await transcript(id)).filter((m) => m.agent).map((m) => m.id);
    expect(agentIds.length).toBe(2);
    await page.goto(`${base()}/#/c/${id}/history`);
    await page.waitForSelector("#history .end");
    expect(
      await page
        .locator("#history article.msg.agent")
        .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id)),
    ).toEqual(agentIds);
    expect(await page.locator("#history article.msg.agent .agent-tag").first().textContent()).toBe("sub-agent reader");
    await shot("history-agent");
  });

  it("History marks the fold boundary and shows the current summary", async () => {
    const id = await newConversation({ foldThresholdChars: 2000, tailMessages: 2, summaryMaxChars: 1500 });
    let meta: Partial<Schemas["Conversation"]> = {};
    for (let turn = 0; turn < 12 && !meta.foldCount; turn++) {
      await api("POST", `/v1/conversations/${id}/messages`, {
        content: `turn ${turn}: ledger entry LEDGER-${turn}\n@reply-chars 900`,
      });
      for (let i = 0; i < 40; i++) {
        meta = (await api("GET", `/v1/conversations/${id}`)).json;
        if (!meta.foldInFlight) break;
        await sleep(250);
      }
    }
    expect(meta.foldCount).toBeGreaterThanOrEqual(1);
    await page.goto(`${base()}/#/c/${id}/history`);
    await page.waitForSelector("#history .end");
    expect(await page.locator("#history article.msg").count()).toBe(meta.lastSeq);
    const boundary = page.locator("#fold-boundary");
    expect(await boundary.locator(".fold-line").textContent()).toContain(meta.summarizedThroughMessageId);
    expect(await boundary.locator(".summary .text").textContent()).toBe(meta.summary);
    expect(await boundary.evaluate((el) => (el.previousElementSibling as HTMLElement).dataset.seq)).toBe(
      String(meta.summarizedThroughMessage),
    );
    await shot("history-fold");
  });

  it("search finds a message across conversations and opens History at it", async () => {
    const word = `quokka${Date.now().toString(36)}`;
    // Stub every stale result at once, so the earlier conversation_read result is a stub in replay.
    expect(
      (
        await api("PATCH", `/v1/conversations/${chatId}`, {
          settings: { stubMinChars: 100, stubAfterExchanges: 1, stubBatchChars: 0 },
        })
      ).status,
    ).toBe(200);
    await api("POST", `/v1/conversations/${chatId}/messages`, { content: `a note about the ${word} colony` });
    let hit: Routes["GET /v1/search"]["response"]["data"][number] | undefined;
    for (let i = 0; i < 40 && !hit; i++) {
      hit = (await api("GET", `/v1/search?q=${word}&kind=message`)).json.data[0];
      if (!hit) await sleep(250);
    }
    expect(hit?.messageId).toBeTruthy();
    await page.goto(`${base()}/#/`);
    await page.fill("#search-q", word);
    await page.press("#search-q", "Enter");
    const link = page.locator("#search-results .hit-link").first();
    await link.waitFor();
    expect(await page.locator("#search-results mark").first().textContent()).toBe(word);
    await shot("search");
    await link.click();
    const target = page.locator("#history article.msg.hit");
    await target.waitFor();
    expect(await target.getAttribute("data-id")).toBe(hit?.messageId);
    expect(page.url()).toContain(`#/c/${chatId}/history?at=${hit?.messageId}`);
    await expect
      .poll(() =>
        target.evaluate((el) => {
          const r = el.getBoundingClientRect();
          return r.top >= 0 && r.bottom <= innerHeight;
        }),
      )
      .toBe(true);
    await shot("search-hit");
    // History shows the stubbed result in full: the transcript holds the original.
    expect(
      (await api("GET", `/v1/conversations/${chatId}/replay`)).json.estimate.stubbedResults,
    ).toBeGreaterThanOrEqual(1);
    const stubbed = page.locator("#history details.tool-result:has(.badge.stub)").first();
    const id = await stubbed.getAttribute("data-tool-result");
    const original = (await transcript(chatId))
      .flatMap((m) => m.content)
      .find((b) => b.type === "tool_result" && b.tool_use_id === id);
    const content = original?.content;
    const text = typeof content === "string" ? content : textBlocks(Array.isArray(content) ? content : []).join("\n");
    expect(text.length).toBeGreaterThan(100);
    expect(await stubbed.locator("pre").textContent()).toBe(text);
  });

  it("the replay view shows the next request against its budget", async () => {
    await page.goto(`${base()}/#/c/${smallId}/replay`);
    await page.waitForSelector("#budget-line");
    const replay = (await api("GET", `/v1/conversations/${smallId}/replay`)).json;
    const line = await page.locator("#budget-line").textContent();
    expect(line).toContain(`${replay.estimate.tokens.toLocaleString("en")} tokens`);
    expect(line).toContain("22,000-token budget");
    expect(Number(await page.locator("#budget-meter").getAttribute("value"))).toBe(replay.estimate.tokens);
    expect(await page.locator("#replay-messages article.msg").count()).toBe(replay.messages.length);
    await shot("replay");
  });

  it("shows the client tool calls a paused turn waits on, and a person answers them by hand", async () => {
    const id = await newConversation();
    const tools = [
      {
        name: "ask_person",
        description: "Ask the person at the keyboard",
        input_schema: { type: "object", properties: { question: { type: "string" } } },
      },
    ];
    const paused = (
      await api("POST", `/v1/conversations/${id}/messages`, {
        content: `@tool ask_person {"question":"favourite colour?"}`,
        tools,
      })
    ).json;
    expect(paused.stop_reason).toBe("requires_action");
    const callId = paused.requires_action!.calls[0].id;
    await page.goto(`${base()}/#/c/${id}`);
    const panel = page.locator(`#pending-calls [data-pending-call="${callId}"]`);
    await panel.waitFor();
    expect(await panel.locator("pre").textContent()).toContain("favourite colour?");
    await page.fill(`#pending-calls [data-answer="${callId}"]`, "teal, typed by hand");
    await shot("pending-calls");
    await page.click("#send-results");
    await page.waitForSelector("#pending-calls", { state: "detached", timeout: 30_000 });
    const saved = await transcript(id);
    expect(saved[2].content).toEqual([{ type: "tool_result", tool_use_id: callId, content: "teal, typed by hand" }]);
    expect(saved.at(-1)?.role).toBe("assistant");
    await page.locator(`.turn.done [data-tool-result="${callId}"]`).first().waitFor({ state: "attached" });
  });

  it("the API reference page renders every operation of /openapi.json under the page's CSP", async () => {
    const reference = await browser.newPage();
    const problems: string[] = [];
    reference.on("pageerror", (err) => problems.push(String(err)));
    reference.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await reference.goto(`${base()}/api.html`);
    await reference.waitForSelector(".operation");
    const doc = await (await fetch(`${base()}/openapi.json`)).json();
    const operations = Object.values(doc.paths as Record<string, object>).reduce(
      (n, ops) => n + Object.keys(ops).length,
      0,
    );
    expect(await reference.locator(".operation").count()).toBe(operations);
    expect(await reference.locator("#schema-TurnEvent pre").textContent()).toContain('"turn_start"');
    expect(await reference.locator('[id="get /v1/conversations/{id}/ws"]').textContent()).toContain("x-websocket");
    expect(problems).toEqual([]);
    await reference.close();
  });
});
