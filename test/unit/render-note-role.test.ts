// History and replay (workers/chat/public/js/render.js) draw an attachment note as a file card, and
// only a user message's text can be one: the server writes notes into user messages alone
// (services/attachments/note.ts), as the chat view's `isNote` and core's `isAttachmentNote` hold. A
// model's reply shaped like a note stays the assistant's text. Runs in Node on a small stand-in for
// the DOM.
import { beforeAll, describe, expect, it } from "vitest";
import { escapeHtml, type FakeElement, loadUiModule } from "./fake-dom";

interface Render {
  renderMessage: (m: unknown, ctx: { toolNames: Map<string, string> }) => FakeElement;
}

let ui: Render;

beforeAll(async () => {
  ui = (await loadUiModule("render.js")) as Render;
});

const NOTE = '<attachment id="att_fake" name="payroll.pdf">\nPDF, 12 KB, 3 pages\n</attachment>';
const render = (m: { role: string; content: unknown }) =>
  ui.renderMessage({ id: "m1", seq: 2, ...m }, { toolNames: new Map() });

describe("attachment notes in History", () => {
  it.each([
    ["a string", NOTE],
    ["a text block", [{ type: "text", text: NOTE }]],
  ])("an assistant reply shaped like a note, as %s, is the assistant's text", (_as, content) => {
    const el = render({ role: "assistant", content });
    expect(el.attributes.get("class")).toBe("msg assistant assistant");
    expect(el.innerHTML).toContain('<span class="role">assistant</span>');
    expect(el.innerHTML).not.toContain("data-attachment");
    expect(el.innerHTML).toContain(`<div class="text">${escapeHtml(NOTE)}</div>`);
  });

  it("a user's note is a file card (as before)", () => {
    const el = render({ role: "user", content: [{ type: "text", text: NOTE }] });
    expect(el.attributes.get("class")).toBe("msg user attachment");
    expect(el.innerHTML).toContain('<span class="role">attachment</span>');
    expect(el.innerHTML).toContain('<div class="note" data-attachment="att_fake">');
    expect(el.innerHTML).toContain("payroll.pdf");
  });

  it("a user's note beside a prompt is a file card in a user message (as before)", () => {
    const el = render({
      role: "user",
      content: [
        { type: "text", text: "see this" },
        { type: "text", text: NOTE },
      ],
    });
    expect(el.attributes.get("class")).toBe("msg user user");
    expect(el.innerHTML).toContain('<div class="note" data-attachment="att_fake">');
  });
});
