// Attachments on the running stack: a PDF's first pdf_search indexes its pages through the job
// queue (the summarizer worker extracts them), narrating progress; a later search hits the index.
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { api, base, newConversation } from "./client";
import type { Schemas } from "../../client";

describe("attachments on the running stack", () => {
  it("index a PDF on its first search, with progress events, and find the page", async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 1; i <= 400; i++)
      doc.addPage([300, 200]).drawText(`page ${i} quince${i}`, { x: 20, y: 100, font, size: 12 });
    const id = await newConversation();
    const up = await fetch(`${base()}/v1/conversations/${id}/attachments?name=quince.pdf`, {
      method: "POST",
      headers: { authorization: "Bearer dev-local-key", "content-type": "application/pdf" },
      body: (await doc.save()) as unknown as BodyInit,
    });
    const att = (await up.json()) as Schemas["Attachment"];
    expect(att.facts).toMatchObject({ pageCount: 400 });
    const res = await fetch(`${base()}/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: {
        authorization: "Bearer dev-local-key",
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify({ content: `@tool pdf_search {"attachment_id":"${att.id}","query":"quince377"}` }),
    });
    const text = await res.text();
    expect(text).toMatch(/event: progress\ndata: .*First search of quince\.pdf \(400 pages\)/);
    expect(text).toMatch(/page 377/);
    const again = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool pdf_search {"attachment_id":"${att.id}","query":"quince12"}`,
    });
    const result = again.json.messages[2].content[0].content as string;
    expect(result).not.toMatch(/Indexing continues/);
    expect(result).toMatch(/- page 12:/);
  });
});
