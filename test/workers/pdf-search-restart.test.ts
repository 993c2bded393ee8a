// pdf_search starts an indexing run again only when it has made no progress for ten minutes
// (agent/tools/pdf-search.ts STALL_MS): pages landing mark the run alive, so a long run that is
// still progressing is never started again (which queued every chunk once more, from page 1).
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { pdfSearch } from "../../agent/tools/pdf-search";
import { attachments } from "../../db/schema";
import type { ObjectScope } from "../../durable-objects/conversation/object-scope";
import type { ConversationRecord } from "../../durable-objects/conversation/record";
import { type TurnWrites, toolContextFor } from "../../durable-objects/conversation/tool-context";
import { markIndexing } from "../../services/attachments/store";
import { runExtractJob } from "../../workers/summarizer/extract";
import { api, createConversation } from "./helpers";

const PAGES = 4;
const ELEVEN_MINUTES_AGO = () => new Date(Date.now() - 11 * 60_000).toISOString();

async function makePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`page ${i} restartword${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

/** A conversation with a PDF whose indexing run started eleven minutes ago (the upload as old). */
async function oldRun(): Promise<{ conversationId: string; attachmentId: string }> {
  const conversationId = await createConversation();
  const up = await api("POST", `/v1/conversations/${conversationId}/attachments?name=long.pdf`, await makePdf(PAGES), {
    raw: true,
    headers: { "content-type": "application/pdf" },
  });
  expect(up.status).toBe(201);
  const attachmentId = up.json.id as string;
  await markIndexing(env.DB, "dev", attachmentId);
  const long = ELEVEN_MINUTES_AGO();
  await drizzle(env.DB)
    .update(attachments)
    .set({ indexStartedAt: long, updatedAt: long })
    .where(and(eq(attachments.tenantId, "dev"), eq(attachments.id, attachmentId)));
  return { conversationId, attachmentId };
}

/** pdf_search through the object's own tool context; the starts it makes, recorded instead of queued. */
async function searchRecordingStarts(conversationId: string, attachmentId: string): Promise<number[]> {
  const ctx = toolContextFor({
    scope: { env } as unknown as ObjectScope,
    record: {} as ConversationRecord,
    ref: { tenantId: "dev", conversationId },
    projectTools: [],
    readOwn: async () => null,
    progress: () => {},
    writes: {} as TurnWrites,
  });
  const starts: number[] = [];
  let looks = 0;
  const status = ctx.pageIndex.status;
  ctx.pageIndex.status = async (id) => {
    const s = await status(id);
    // After the first look (where a stall is judged) the run completes: no 25 s wait for it.
    return ++looks > 1 ? { ...s, indexed: PAGES } : s;
  };
  ctx.pageIndex.start = async (_id, pages) => {
    starts.push(pages);
  };
  await pdfSearch.run({ attachment_id: attachmentId, query: "restartword2" }, ctx);
  return starts;
}

describe("pdf_search and an indexing run that began long ago", () => {
  it("does not start again a run whose pages are still landing", async () => {
    const { conversationId, attachmentId } = await oldRun();
    // A chunk lands now: the run is progressing, eleven minutes after it began.
    expect(
      await runExtractJob({ kind: "extract", tenantId: "dev", attachmentId, fromPage: 1, toPage: 3 }, env as Env),
    ).toEqual({ pages: 3, indexed: 3 });
    expect(await searchRecordingStarts(conversationId, attachmentId)).toEqual([]);
  });

  it("starts again a run that has made no progress for ten minutes", async () => {
    const { conversationId, attachmentId } = await oldRun();
    expect(await searchRecordingStarts(conversationId, attachmentId)).toEqual([PAGES]);
  });
});
