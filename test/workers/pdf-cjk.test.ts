// CJK text in a PDF whose font has a predefined CMap (90ms-RKSJ-H) and no /ToUnicode: only pdf.js
// with the CMaps the worker bundles (data/pdf-cmaps, services/attachments/formats/pdf/cmaps.gen.ts) can read it.
import sjisPdf from "../fixtures/pdf/pdfjs--90ms_rksj_h_sample.pdf?inline";
import { describe, expect, it } from "vitest";
import { api, createConversation, send, turnMessages } from "./helpers";
import { ofType, resultText } from "../blocks";

const bytes = (dataUrl: string) => Uint8Array.from(atob(dataUrl.split(",")[1]), (c) => c.charCodeAt(0));

describe("PDF text through predefined CMaps", () => {
  it("pdf_read returns the Japanese text of a Shift-JIS CID font", async () => {
    const id = await createConversation();
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=sjis.pdf`, bytes(sjisPdf), {
      raw: true,
      headers: { "content-type": "application/pdf" },
    });
    expect(up.status).toBe(201);
    expect(up.json.facts).toMatchObject({ kind: "pdf", pageCount: 1 });
    const r = await send(id, `@tool pdf_read {"attachment_id":"${up.json.id}","pages":"1"}`);
    const text = resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));
    expect(text).toContain("Hello ASCII");
    expect(text).toContain("日本語テスト");
  });
});
