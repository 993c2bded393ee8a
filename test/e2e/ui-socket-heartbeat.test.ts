// A socket that died without a `close` (half-open: the laptop slept, the network changed, a proxy
// dropped it silently) is found by the page's heartbeat: a `ping` frame (here on the browser's
// `online` event) that nothing answers within the deadline gives the socket up, and the page
// reconnects as after any drop. And a tool result of megabytes is shown as a bounded head with
// "Show all", never put into the page whole.
import type { WebSocketRoute } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, base } from "./client";
import { browserForFile, pausedConversation, signedInTab, turnsSettled } from "./page-waits";

const { browser, contexts } = browserForFile();

describe("the chat's socket heartbeat", () => {
  it("gives up a half-open socket after an unanswered ping, reconnects, and a later send is answered", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "half-open socket" })).json.id as string;
    const p = await signedInTab(browser(), contexts);
    // Every socket of the page goes through the test, forwarded both ways until it is cut.
    const routes: { page: WebSocketRoute; cut: boolean }[] = [];
    await p.routeWebSocket(/\/ws\?ticket=/, (ws) => {
      const server = ws.connectToServer();
      const route = { page: ws, cut: false };
      routes.push(route);
      ws.onMessage((m) => route.cut || server.send(m));
      server.onMessage((m) => route.cut || ws.send(m));
    });
    // The page's timers are the test's to move on: the ping's deadline passes without a wait.
    await p.clock.install();
    await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
    await p.waitForSelector("#socket-status.live", { state: "attached" });
    expect(routes).toHaveLength(1);
    await p.evaluate(() => {
      const banner = document.getElementById("conn-banner");
      if (!banner) throw new Error("no banner");
      new MutationObserver(() => {
        if (!banner.hidden && banner.textContent?.includes("Connection lost")) window.sawLost = true;
      }).observe(banner, { attributes: true, childList: true, subtree: true });
    });
    // Half-open: nothing gets through either way, and nothing closes.
    routes[0].cut = true;
    await p.evaluate(() => window.dispatchEvent(new Event("online")));
    await p.clock.fastForward(11_000);
    await p.waitForFunction(() => window.sawLost === true, null, { timeout: 10_000 });
    // Back on a new socket, which answers.
    await p.clock.fastForward(2_000);
    await p.waitForFunction(() => document.querySelector("#socket-status.live"), null, { timeout: 20_000 });
    expect(routes).toHaveLength(2);
    await p.fill("#composer", "still there?\n@reply-chars 30");
    await p.press("#composer", "Enter");
    await turnsSettled(p, 1);
    expect(await p.locator(".turn.done .msg.assistant .md").last().textContent()).not.toBe("");
  });
});

describe("a tool result of megabytes", () => {
  it("shows a bounded head, says how much is hidden, and puts the rest in on Show all", async () => {
    const { id, paused } = await pausedConversation("big result");
    // Five times what the page shows at once (a result may carry 1,000,000 characters).
    const big = `${"0123456789abcdef\n".repeat(6_000)}the end`;
    const call = paused.requires_action!.calls[0].id;
    const posted = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call, content: big }],
    });
    expect(posted.status, JSON.stringify(posted.json)).toBe(200);
    const p = await signedInTab(browser(), contexts);
    await p.goto(`${base()}/#/c/${id}`, { waitUntil: "domcontentloaded" });
    const result = p.locator(`[data-tool-result="${call}"]`);
    await result.waitFor({ state: "attached" });
    const shown = await result.locator("pre").evaluate((pre) => pre.textContent?.length ?? 0);
    expect(shown).toBeGreaterThan(1_000);
    expect(shown).toBeLessThanOrEqual(20_000);
    await result.locator("xpath=ancestor::details[1]").evaluate((d) => ((d as HTMLDetailsElement).open = true));
    expect(await result.textContent()).toMatch(/K chars more not shown/);
    const more = result.getByRole("button", { name: "Show all" });
    await more.focus();
    await p.keyboard.press("Enter");
    await expect.poll(() => result.locator("pre").evaluate((pre) => pre.textContent?.length ?? 0)).toBe(big.length);
    expect(await more.count()).toBe(0);
  });
});

declare global {
  interface Window {
    sawLost?: boolean;
  }
}
