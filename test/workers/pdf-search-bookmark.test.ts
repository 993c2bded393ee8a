// pdf_search reads its own writes, as memory_search does (docs/scale.md, "Reads near the user"): the
// pages it finds were written at the shard's primary just before (by the tool itself for a locked
// PDF, by the summarizer's extraction jobs otherwise), and its search session starts at a bookmark
// that has seen them, not at the object's older one, where a replica still lacks them.
import lockedPdf from "../fixtures/pdf/qpdf-enc-R3-V2-user-view.pdf?inline";
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { markIndexing } from "../../services/attachments/store";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { runExtractJob } from "../../workers/summarizer/extract";
import { resultText, ofType } from "../blocks";
import { api, createConversation, eventually, inConversation, newTenantWithId, send, turnMessages } from "./helpers";
import { replicaBehind, type SearchStart } from "./replica-behind";
import { latest, spyShard } from "./shard-spy";

const lockedBytes = () => Uint8Array.from(atob(lockedPdf.split(",")[1]), (c) => c.charCodeAt(0));

async function makePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`page ${i} marmotword${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

/**
 * A new tenant's conversation with a PDF, whose object reads its shard through a spy over a replica
 * that sits at the object's index bookmark after a first turn (`held`): it has none of the PDF's
 * pages, which are all written later.
 */
async function conversationWithPdf(file: { name: string; bytes: Uint8Array }) {
  const { tenantId, key } = await newTenantWithId();
  const shard = (await routeOf(env as Env, tenantId)).shard;
  let held = "";
  const searches: (SearchStart & { at: number })[] = [];
  const replica = replicaBehind(shardDatabase(env, shard), {
    behind: () => held,
    kind: "page",
    onSearch: (s) => searches.push({ ...s, at: spy.log.length }),
  });
  const spy = spyShard(replica);
  const id = await createConversation(undefined, key);
  await inConversation(id, (i) => {
    i.env = { ...i.env, [shard]: spy.db };
  });
  const up = await api("POST", `/v1/conversations/${id}/attachments?name=${file.name}`, file.bytes, {
    key,
    raw: true,
    headers: { "content-type": "application/pdf" },
  });
  expect(up.status).toBe(201);
  await send(id, "hello, a first turn so the object holds an index bookmark", key);
  await eventually(async () => spy.written().length > 0 || null);
  await inConversation(id, async (i) => {
    await i.outbox.pending();
    await i.outbox.settled();
  });
  held = latest(spy.written());
  return { tenantId, key, id, shard, spy, searches, attachmentId: up.json.id as string };
}

const toolResult = (r: { text: string }) => resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));

describe("pdf_search reads the pages just indexed", () => {
  it("a locked PDF's pages, put by the tool itself, are searched from their write's bookmark on", async () => {
    const c = await conversationWithPdf({ name: "locked.pdf", bytes: lockedBytes() });
    const from = c.spy.log.length;
    const r = await send(
      c.id,
      `@tool pdf_search {"attachment_id":"${c.attachmentId}","query":"Potato","password":"view"}`,
      c.key,
    );
    const found = c.searches.filter((s) => s.at > from);
    expect(found).toHaveLength(1);
    // The shard writes before the search are the tool's page writes (the turn's own come after its reply).
    const pageWrites = c.spy.log.slice(from, found[0].at).flatMap((s) => ("written" in s ? [s.written] : []));
    expect(pageWrites.length).toBeGreaterThan(0);
    // The search's session starts where the last page write left the shard, or later.
    expect.soft(found[0].start >= latest(pageWrites), "search session starts at or after the page writes").toBe(true);
    // So a replica at that start has the pages.
    expect.soft(toolResult(r)).toMatch(/pages of locked\.pdf match "Potato"/);
  });

  it("a PDF the summarizer indexed is searched at least as far as the count of its pages read", async () => {
    const c = await conversationWithPdf({ name: "report.pdf", bytes: await makePdf(4) });
    // The summarizer indexes the four pages (as the queue's extraction job does), on its own binding.
    await markIndexing(env.DB, c.tenantId, c.attachmentId);
    const job = {
      kind: "extract" as const,
      tenantId: c.tenantId,
      attachmentId: c.attachmentId,
      fromPage: 1,
      toPage: 4,
    };
    expect(await runExtractJob(job, env as Env)).toEqual({ pages: 4, indexed: 4 });
    const primary = shardDatabase(env, c.shard).withSession("first-primary");
    await primary.prepare("SELECT 1").first();
    const pagesAt = primary.getBookmark()!;
    expect(pagesAt > latest(c.spy.written()), "the pages are written after the object's bookmark").toBe(true);

    const from = c.spy.log.length;
    const r = await send(c.id, `@tool pdf_search {"attachment_id":"${c.attachmentId}","query":"marmotword3"}`, c.key);
    const found = c.searches.filter((s) => s.at > from);
    expect(found).toHaveLength(1);
    expect.soft(found[0].start >= pagesAt, "search session starts at or after the pages' writes").toBe(true);
    expect.soft(toolResult(r)).toContain("page 3:");
  });
});
