// The Settings form's thinking budget, in a real browser against the running stack: its field is
// there only while Thinking is "enabled" (manual extended thinking), a number saves as
// thinkingBudgetTokens, an emptied one sends null (the server's default), a switch away from
// "enabled" sends no budget, and a budget the server refuses is shown and saves nothing.
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, base, newConversation } from "./client";
import { browserForFile, signedInTab } from "./page-waits";

const { browser, contexts } = browserForFile();

/** Claude Haiku 4.5 lists "enabled" in its catalog `thinking.modes` (its reserve, 32,000, is its max_tokens). */
const MODEL = "claude-haiku-4-5";
const BUDGET = "#set-thinkingBudgetTokens";

/** The conversation's settings as the server has them now. */
async function settings(id: string): Promise<Record<string, unknown>> {
  return ((await api("GET", `/v1/conversations/${id}`)).json as unknown as { settings: Record<string, unknown> })
    .settings;
}

/** A signed-in tab on the conversation's Settings form. */
async function settingsTab(id: string): Promise<Page> {
  const p = await signedInTab(browser(), contexts);
  await p.goto(`${base()}/#/c/${id}/settings`);
  await p.waitForSelector("#settings-form");
  return p;
}

const isPatch = (r: Request) => r.method() === "PATCH" && /\/v1\/conversations\/conv_/.test(r.url());

/** Clicks Save, waits for the PATCH's answer and the status line's `status`, and returns the body sent. */
async function save(p: Page, status: (text: string) => boolean = (t) => t === "Saved.") {
  const [req] = await Promise.all([
    p.waitForRequest(isPatch),
    p.waitForResponse((r) => isPatch(r.request())),
    p.click("#settings-form button[type=submit]"),
  ]);
  await expect.poll(async () => status((await p.locator("#settings-status").textContent()) ?? "")).toBe(true);
  return JSON.parse(req.postData() ?? "{}") as Record<string, unknown>;
}

/** Whether the budget field can be seen and used. */
const usable = async (p: Page) => ({ visible: await p.isVisible(BUDGET), enabled: await p.isEnabled(BUDGET) });

describe("the thinking budget in Settings", () => {
  it("is offered only while Thinking is enabled, under its own label", async () => {
    const id = await newConversation({ model: MODEL });
    const p = await settingsTab(id);
    expect(await p.inputValue("#set-thinking")).toBe("auto");
    expect(await usable(p)).toEqual({ visible: false, enabled: false });
    await p.selectOption("#set-thinking", "enabled");
    expect(await usable(p)).toEqual({ visible: true, enabled: true });
    // A real label names it.
    await p.getByLabel("Thinking budget (tokens)").fill("2048");
    expect(await p.inputValue(BUDGET)).toBe("2048");
    await p.selectOption("#set-thinking", "disabled");
    expect(await usable(p)).toEqual({ visible: false, enabled: false });
    // Off "enabled", no budget goes with the change.
    expect(await save(p)).toEqual({ settings: { thinking: "disabled" } });
    expect(await settings(id)).toMatchObject({ thinking: "disabled", thinkingBudgetTokens: null });
  });

  it("a budget saves as thinkingBudgetTokens, and an emptied one sends null", async () => {
    const id = await newConversation({ model: MODEL });
    const p = await settingsTab(id);
    await p.selectOption("#set-thinking", "enabled");
    await p.fill(BUDGET, "4096");
    expect(await save(p)).toEqual({ settings: { thinking: "enabled", thinkingBudgetTokens: 4096 } });
    expect(await settings(id)).toMatchObject({ thinking: "enabled", thinkingBudgetTokens: 4096 });
    // The form shows what the server holds, and a Save with nothing changed sends no budget.
    expect(await p.inputValue(BUDGET)).toBe("4096");
    await p.selectOption("#set-display", "omitted");
    expect(await save(p)).toEqual({ settings: { thinkingDisplay: "omitted" } });

    await p.fill(BUDGET, "");
    expect(await save(p)).toEqual({ settings: { thinkingBudgetTokens: null } });
    expect(await settings(id)).toMatchObject({ thinking: "enabled", thinkingBudgetTokens: null });
    expect(await p.inputValue(BUDGET)).toBe("");
  });

  it("switching Thinking away from enabled sends no budget, even one just typed", async () => {
    const id = await newConversation({ model: MODEL, thinking: "enabled", thinkingBudgetTokens: 4096 });
    const p = await settingsTab(id);
    expect(await usable(p)).toEqual({ visible: true, enabled: true });
    expect(await p.inputValue(BUDGET)).toBe("4096");
    await p.fill(BUDGET, "5000");
    await p.selectOption("#set-thinking", "auto");
    expect(await save(p)).toEqual({ settings: { thinking: "auto" } });
    expect(await settings(id)).toMatchObject({ thinking: "auto", thinkingBudgetTokens: 4096 });
  });

  it("a budget the server refuses is shown as the refusal and nothing is saved", async () => {
    const id = await newConversation({ model: MODEL });
    const before = await settings(id);
    const reserve = Number(before.outputReserveTokens);
    expect(reserve).toBeGreaterThan(1_024);
    const p = await settingsTab(id);
    await p.selectOption("#set-thinking", "enabled");
    await p.selectOption("#set-display", "omitted");
    // At max_tokens (the output reserve, within the model's maximum output): refused.
    await p.fill(BUDGET, String(reserve));
    // The refusal names the field by its label, and the focus is on it.
    const body = await save(p, (t) => t.includes('"Thinking budget (tokens)"'));
    expect(body).toEqual({
      settings: { thinking: "enabled", thinkingDisplay: "omitted", thinkingBudgetTokens: reserve },
    });
    expect(await p.locator("#settings-status").textContent()).toContain(`must be smaller than ${reserve}`);
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("set-thinkingBudgetTokens");
    expect(await settings(id)).toEqual(before);
    // The form keeps what the person entered, to correct it.
    expect(await p.inputValue(BUDGET)).toBe(String(reserve));
  });
});
