// A message whose socket dropped just after it went out may be queued on the server all the same:
// the page puts it back into the composer, and sending it again must not run it twice. Every send
// carries an idempotencyKey, and the put-back prompt goes again with the same key, so the server
// answers it as the turn it already is (the page follows that turn rather than showing an error).
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, textBlocks, transcript } from "./client";
import { signedInTab, turnsSettled } from "./page-waits";

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
  // The stack's first turn is slow (a cold worker): taken here, not inside the test's waits.
  const id = (await api("POST", "/v1/conversations", { title: "warm-up" })).json.id;
  await api("POST", `/v1/conversations/${id}/messages`, { content: "warm up\n@reply-chars 20" });
});
afterAll(async () => {
  for (const c of contexts.splice(0)) await c.close().catch(() => {});
  await browser?.close();
});

describe("a send lost with its socket", () => {
  it("goes back into the composer with its idempotencyKey: sent again, it is the same turn, not a second one", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "resend after drop" })).json.id as string;
    const p = await signedInTab(browser, contexts);
    const sends: { content?: string; idempotencyKey?: string }[] = [];
    p.on("websocket", (ws) =>
      ws.on("framesent", (f) => {
        const d = JSON.parse(String(f.payload));
        if (d.type === "send") sends.push(d);
      }),
    );
    await p.goto(`${p.url().split("#")[0]}#/c/${id}`, { waitUntil: "domcontentloaded" });
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    // Another client's slow turn runs: the page's message will queue behind it.
    void api("POST", `/v1/conversations/${id}/messages`, {
      content: "another client's question\n@reply-chars 600\n@stream-pace 300",
    });
    await p.waitForSelector(".turn.live .md.streaming", { state: "attached" });
    // The page's send leaves, then its socket drops before any answer (`accepted`) reaches the page.
    await p.evaluate(() => {
      const s = window.sockets.at(-1)!;
      const real = s.send.bind(s);
      s.send = (data: string) => {
        real(data);
        if (JSON.parse(data).type === "send") s.close();
      };
    });
    const question = "my question, sent once";
    await p.fill("#composer", question);
    await p.press("#composer", "Enter");
    // Reconnected: the message, not saved yet (queued), is offered back in the composer.
    await p.waitForFunction((q) => (document.getElementById("composer") as HTMLTextAreaElement).value === q, question, {
      timeout: 30_000,
    });
    expect(sends[0]?.content).toBe(question);
    expect(typeof sends[0]?.idempotencyKey).toBe("string");
    // The person sends it again.
    await p.waitForSelector("#send:not([hidden])");
    await p.press("#composer", "Enter");
    await expect.poll(() => sends.length).toBe(2);
    expect(sends[1]?.idempotencyKey).toBe(sends[0]?.idempotencyKey);
    await turnsSettled(p, 2);
    await p.waitForTimeout(1_000);
    const asked = (await transcript(id))
      .filter((m) => m.role === "user")
      .map((m) => textBlocks(m.content).join(""))
      .filter((t) => t === question);
    expect(asked).toHaveLength(1);
    // The page followed its turn: no error, and the composer is empty.
    expect(await p.locator(".turn-error").count()).toBe(0);
    expect(await p.inputValue("#composer")).toBe("");
  });
});
