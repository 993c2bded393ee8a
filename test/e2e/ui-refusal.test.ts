// A model's refusal in the chat, in a real browser against the running stack: the turn ends with a
// visible notice that the model declined (with its category, as the live event named it), the
// announcer says so rather than "Reply finished.", and the notice is still there after a reload.
import { describe, expect, it } from "vitest";
import { browserForFile, turnsSettled } from "./page-waits";
import { transcript } from "./client";

const { openChat } = browserForFile();

describe("a reply the model refuses", () => {
  it("shows a refusal notice once the turn ends, announces it, and keeps the notice after a reload", async () => {
    const { p, id } = await openChat("refused");
    await p.fill("#composer", "Tell me about harbors.\n@stop refusal cyber");
    await p.press("#composer", "Enter");
    await turnsSettled(p, 1);
    expect((await transcript(id)).at(-1)).toMatchObject({ role: "assistant", stopReason: "refusal" });
    const notice = p.locator(".turn.done .msg.assistant .refusal");
    await expect.poll(() => notice.count()).toBe(1);
    expect(await notice.textContent()).toMatch(/declined to answer.*cyber/);
    expect(await notice.textContent()).toMatch(/not sent to the model again/);
    await expect.poll(() => p.locator("#announcer").textContent()).toMatch(/declined to answer/);
    expect(await p.locator("#announcer").textContent()).not.toMatch(/Reply finished/);

    await p.reload({ waitUntil: "domcontentloaded" });
    await turnsSettled(p, 1);
    const again = p.locator(".turn.done .msg.assistant .refusal");
    await expect.poll(() => again.count()).toBe(1);
    expect(await again.textContent()).toMatch(/declined to answer/);
  });

  it("a reply that ends normally has no refusal notice", async () => {
    const { p } = await openChat("answered");
    await p.fill("#composer", "Tell me about harbors.\n@reply-chars 40");
    await p.press("#composer", "Enter");
    await turnsSettled(p, 1);
    await expect.poll(() => p.locator("#announcer").textContent()).toMatch(/Reply finished/);
    expect(await p.locator(".refusal").count()).toBe(0);
  });
});
