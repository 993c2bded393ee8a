// The views around the chat, in a real browser against the running stack: Settings saved twice
// after a model switch sends only what changed, a slow Settings or Replay never covers the view the
// person went on to, Import runs once per file and lists its chat in the sidebar, a name set here
// gives way to a later rename, an emptied number in Settings is named rather than skipped, and a
// file dropped outside the chat's drop zone never leaves the app.
import { chromium, type Browser, type BrowserContext, type Page, type Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseChromium } from "./browser";
import { api, base, newConversation } from "./client";
import { signedInTab } from "./page-waits";

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const { executablePath, args } = await chooseChromium();
  browser = await chromium.launch({ executablePath, args });
});

afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

afterAll(async () => {
  await browser?.close();
});

const tab = (): Promise<Page> => signedInTab(browser, contexts);

/** Settings (and title) as the server has them now. */
async function meta(id: string) {
  return (await api("GET", `/v1/conversations/${id}`)).json as unknown as {
    title: string | null;
    settings: Record<string, unknown>;
  };
}

/** Clicks Save on the Settings form and returns the PATCH body it sent. */
async function save(p: Page): Promise<Record<string, unknown>> {
  const patch = (r: Request) => r.method() === "PATCH" && /\/v1\/conversations\/conv_/.test(r.url());
  // Both waits are set before the click: one set after the request was seen could miss a response
  // that had already come (a fast PATCH), and wait out its timeout.
  const [req] = await Promise.all([
    p.waitForRequest(patch),
    p.waitForResponse((r) => patch(r.request())),
    p.click("#settings-form button[type=submit]"),
  ]);
  await p.waitForFunction(() => document.getElementById("settings-status")?.textContent === "Saved.");
  return JSON.parse(req.postData() ?? "{}");
}

/** The sidebar's name for a conversation. */
const sidebarTitle = (p: Page, id: string) =>
  p.evaluate((id) => document.querySelector(`#conversation-list li[data-id="${id}"] .conv-link`)?.textContent, id);

describe("the views around the chat", () => {
  it("a second Save after a model switch sends only what changed, not the old model's numbers", async () => {
    const id = await newConversation({ model: "claude-sonnet-5-5" });
    const before = (await meta(id)).settings;
    const p = await tab();
    await p.goto(`${base()}/#/c/${id}/settings`);
    await p.waitForSelector("#settings-form");
    await p.selectOption("#set-model", "claude-haiku-4-5");
    await save(p);
    const switched = (await meta(id)).settings;
    expect(switched.model).toBe("claude-haiku-4-5");
    expect(switched.contextWindowTokens).not.toBe(before.contextWindowTokens);
    // The form shows what the server now holds.
    expect(await p.inputValue("#set-contextWindowTokens")).toBe(String(switched.contextWindowTokens));

    await p.selectOption("#set-display", "omitted");
    const second = await save(p);
    expect(second).toEqual({ settings: { thinkingDisplay: "omitted" } });
    const after = (await meta(id)).settings;
    expect(after.contextWindowTokens).toBe(switched.contextWindowTokens);
    expect(after.thinkingDisplay).toBe("omitted");
  });

  it("an emptied number in Settings is named and nothing is saved, not left out unsaid", async () => {
    const id = await newConversation();
    const before = (await meta(id)).settings;
    const p = await tab();
    await p.goto(`${base()}/#/c/${id}/settings`);
    await p.waitForSelector("#settings-form");
    const patches: string[] = [];
    p.on("request", (r) => {
      if (r.method() === "PATCH") patches.push(r.url());
    });
    await p.click("details.advanced summary");
    await p.fill("#set-tailMessages", "");
    await p.click("details.advanced summary"); // closed again: the Save opens it to show the field
    await p.fill("#set-title", "Renamed with a number missing");
    await p.click("#settings-form button[type=submit]");
    await expect
      .poll(() => p.locator("#settings-status").textContent())
      .toBe("Messages kept verbatim needs a number: nothing was saved.");
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("set-tailMessages");
    expect(await p.evaluate(() => document.querySelector<HTMLDetailsElement>("details.advanced")?.open)).toBe(true);
    expect(patches).toEqual([]);
    expect(await meta(id)).toMatchObject({ settings: { tailMessages: before.tailMessages } });
    expect((await meta(id)).title).not.toBe("Renamed with a number missing");
    // With a number again it saves, the number and the name.
    await p.fill("#set-tailMessages", "5");
    expect(await save(p)).toEqual({ settings: { tailMessages: 5 }, title: "Renamed with a number missing" });
  });

  /**
   * Opens `view` of a new conversation whose first read (the one that view makes) is held 2 s,
   * then failed when `fail`, goes back to the chat after 300 ms and waits past the held read.
   * Whether the read was held.
   */
  async function leaveSlowView(p: Page, view: string, fail = false) {
    const id = await newConversation();
    let held = false;
    await p.route(
      (u) => u.pathname === `/v1/conversations/${id}`,
      async (route) => {
        if (route.request().method() === "GET" && !held) {
          held = true;
          await new Promise((r) => setTimeout(r, 2000));
          if (fail) {
            const body = JSON.stringify({ error: { type: "api_error", message: "held and failed" } });
            await route.fulfill({ status: 500, contentType: "application/json", body }).catch(() => {});
            return;
          }
        }
        await route.continue().catch(() => {});
      },
    );
    await p.evaluate((h) => (location.hash = h), `#/c/${id}/${view}`);
    await p.waitForTimeout(300);
    await p.evaluate((h) => (location.hash = h), `#/c/${id}`);
    await p.waitForSelector("#composer");
    await p.waitForTimeout(2500);
    return held;
  }

  for (const view of ["settings", "replay"] as const)
    it(`a slow ${view} view does not replace the chat the person went back to`, async () => {
      const p = await tab();
      expect(await leaveSlowView(p, view)).toBe(true);
      expect(await p.locator("#settings-form, .replay-view").count()).toBe(0);
      expect(await p.locator("#composer").count()).toBe(1);
      expect(await p.evaluate(() => document.body.dataset.view)).toBe("chat");
    });

  it("a history view whose load fails after the person went back puts no error over the chat", async () => {
    const p = await tab();
    expect(await leaveSlowView(p, "history", true)).toBe(true);
    expect(await p.getByText("held and failed").count()).toBe(0);
    expect(await p.locator("#composer").count()).toBe(1);
  });

  it("imports a file once however often Import is clicked, and lists it in the sidebar", async () => {
    const name = `dbl-import-${Date.now()}`;
    const p = await tab();
    await p.goto(`${base()}/#/manage`);
    await p.waitForSelector("#import-form");
    const lines = [
      { role: "user", content: "Hello there" },
      { role: "assistant", content: "Hi." },
    ];
    await p.setInputFiles("#import-file", {
      name: `${name}.jsonl`,
      mimeType: "application/x-ndjson",
      buffer: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")),
    });
    await p.dblclick("#import-button");
    await p.waitForURL(/#\/c\/conv_[^/]+\/history/);
    const id = /#\/c\/(conv_[^/?]+)/.exec(p.url())![1];
    await p.waitForTimeout(2000);
    const page = (await api("GET", "/v1/conversations?limit=100")).json as unknown as {
      data: { id: string; title: string | null }[];
    };
    expect(page.data.filter((c) => c.title === name)).toHaveLength(1);
    expect(await sidebarTitle(p, id)).toBe(name);
  });

  it("a name set in the sidebar gives way to a later rename in Settings or elsewhere", async () => {
    const id = await newConversation();
    const p = await tab();
    await p.goto(`${base()}/#/c/${id}`);
    const row = p.locator(`#conversation-list li[data-id="${id}"]`);
    await row.locator(".rename").click();
    await row.locator(".rename-input").fill("Alpha");
    await row.locator(".rename-form button[type=submit]").click();
    await expect.poll(() => sidebarTitle(p, id)).toBe("Alpha");

    await p.evaluate((h) => (location.hash = h), `#/c/${id}/settings`);
    await p.waitForSelector("#settings-form");
    await p.fill("#set-title", "Gamma");
    await save(p);
    await expect.poll(() => sidebarTitle(p, id), { timeout: 5000 }).toBe("Gamma");

    // Renamed by another client: the next reload of the list shows it.
    await api("PATCH", `/v1/conversations/${id}`, { title: "Delta" });
    await p.evaluate(() => window.dispatchEvent(new CustomEvent("conversations-changed")));
    await expect.poll(() => sidebarTitle(p, id), { timeout: 5000 }).toBe("Delta");
  });

  it("a file dropped outside the chat's drop zone is the page's, and the new-chat page says when files can go in", async () => {
    const p = await tab();
    await p.fill("#composer", "typed and kept");
    /** Dispatches dragover then drop with a file on an element; whether each was default-prevented. */
    const dropOn = (selector: string) =>
      p.evaluate((selector) => {
        const target = document.querySelector(selector)!;
        const fire = (type: string) => {
          const dt = new DataTransfer();
          dt.items.add(new File(["hello"], "note.txt", { type: "text/plain" }));
          const e = new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt });
          target.dispatchEvent(e);
          return e.defaultPrevented;
        };
        return [fire("dragover"), fire("drop")];
      }, selector);
    expect(await dropOn("#composer")).toEqual([true, true]);
    expect(await p.locator("#new-chat-form").textContent()).toContain("once the chat has started");
    expect(await p.inputValue("#composer")).toBe("typed and kept");
    expect(await dropOn("#sidebar")).toEqual([true, true]);

    const id = await newConversation();
    await p.goto(`${base()}/#/c/${id}`);
    await p.waitForSelector("#composer");
    expect(await dropOn("#sidebar")).toEqual([true, true]);
    expect(await dropOn("header.top")).toEqual([true, true]);
  });
});
