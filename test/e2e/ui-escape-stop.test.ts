// Escape stops a running turn wherever the focus is in the chat, not only in the message box: after
// Send was clicked with the mouse the focus is on Stop, and Escape there still stops the turn
// (saved as interrupted). Escape in a message's Edit box cancels the edit, not the turn.
import { describe, expect, it } from "vitest";
import { browserForFile, turnsSettled } from "./page-waits";
import { transcript } from "./client";

const { openChat } = browserForFile();

describe("Escape on a running turn", () => {
  it("stops it after Send was clicked with the mouse (the focus on Stop)", async () => {
    const { p, id } = await openChat("escape after click");
    await p.fill("#composer", "slow one\n@reply-chars 3000\n@stream-pace 100");
    await p.click("#send");
    await p.waitForSelector(".turn.live .md.streaming", { timeout: 60_000 });
    expect(await p.evaluate(() => document.activeElement?.id)).toBe("stop");
    await p.keyboard.press("Escape");
    await turnsSettled(p, 1);
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "interrupted" });
  });

  it("in an Edit box cancels the edit and leaves the running turn going", async () => {
    const { p, id } = await openChat("escape in edit");
    await p.fill("#composer", "first\n@reply-chars 20");
    await p.press("#composer", "Enter");
    await turnsSettled(p, 1);
    await p.fill("#composer", "second\n@reply-chars 600\n@stream-pace 100");
    await p.click("#send");
    await p.waitForSelector(".turn.live .md.streaming", { timeout: 60_000 });
    await p.locator(".turn.done .msg.user button.edit").first().click();
    await p.locator(".edit-box").waitFor();
    await p.locator(".edit-box").press("Escape");
    await p.locator(".edit-box").waitFor({ state: "detached" });
    await turnsSettled(p, 2);
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "end_turn" });
  });
});
