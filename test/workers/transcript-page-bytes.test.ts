// GET /v1/conversations/:id/messages crosses RPC from the conversation's object, and Workers caps an
// RPC value at 32 MiB: a page is capped by bytes as well as by count, and a page cut short by its
// bytes carries `next` (a short page is never the end).
import { describe, expect, it } from "vitest";
import { TRANSCRIPT_PAGE_BYTES } from "../../durable-objects/conversation/conversation-store";
import { api, connectSocket, createConversation, inConversation, textOf } from "./helpers";

const BIG_CHARS = 99_990;
const bigText = (i: number) => `${i} ${"lorem ipsum dolor ".repeat(5_555).slice(0, BIG_CHARS)}`;

/** 400 messages of ~100,000 chars each (40 MB of transcript), imported 100 at a time. */
async function bigConversation(): Promise<string> {
  const id = await createConversation();
  for (let call = 0; call < 4; call++) {
    const messages = Array.from({ length: 100 }, (_, j) => ({
      role: j % 2 === 0 ? "user" : "assistant",
      text: bigText(call * 100 + j),
    }));
    const r = await api("POST", `/v1/conversations/${id}/import`, { messages });
    expect(r.status, r.text).toBe(201);
  }
  return id;
}

type Page = { data: { seq: number; role: string; content: { type: string; text?: string }[] }[]; next: number | null };

describe("transcript pages are capped by bytes", { timeout: 300_000 }, () => {
  it("pages a 40 MB transcript at limit=500 without losing or repeating a message", async () => {
    const id = await bigConversation();
    const seqs: number[] = [];
    let cursor: number | null = 0;
    let pages = 0;
    while (cursor !== null) {
      const r = await api("GET", `/v1/conversations/${id}/messages?cursor=${cursor}&limit=500`);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const page = r.json as unknown as Page;
      pages++;
      expect(page.data.length).toBeGreaterThan(0);
      // What one page carries stays well under the RPC cap (and the HTTP answer with it).
      expect(new TextEncoder().encode(r.text).length).toBeLessThan(TRANSCRIPT_PAGE_BYTES + 256 * 1024);
      for (const m of page.data) {
        expect(textOf(m as never)).toBe(bigText(m.seq - 1));
        seqs.push(m.seq);
      }
      // A page cut short by its bytes continues right after its last message.
      if (page.next !== null) expect(page.next).toBe(page.data[page.data.length - 1].seq);
      cursor = page.next;
      expect(pages).toBeLessThan(20);
    }
    expect(pages).toBeGreaterThan(1);
    expect(seqs).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));

    // A socket's catch-up is such a page too: the object never holds 500 whole messages at once,
    // and `resumed` says where to page on from.
    const socket = await connectSocket(`/v1/conversations/${id}/ws?after=0`, { authorization: "Bearer dev-local-key" });
    const resumed = await socket.next((e) => e.type === "resumed", 60_000);
    socket.ws?.close();
    const caught = socket.events.filter((e) => e.type === "message");
    expect(resumed).toMatchObject({ more: true, lastSeq: 400 });
    const through = (resumed as unknown as { through: number }).through;
    expect(caught).toHaveLength(through);
    expect(through).toBeLessThan(400);
    const bytes = caught.reduce((n, e) => n + new TextEncoder().encode(JSON.stringify(e)).length, 0);
    expect(bytes).toBeLessThan(TRANSCRIPT_PAGE_BYTES + 256 * 1024);
  });

  it("still honours the count: a page ends at limit with a next, the last page with null", async () => {
    const id = await createConversation();
    const messages = Array.from({ length: 6 }, (_, j) => ({ role: j % 2 ? "assistant" : "user", text: `m${j}` }));
    expect((await api("POST", `/v1/conversations/${id}/import`, { messages })).status).toBe(201);
    const first = (await api("GET", `/v1/conversations/${id}/messages?limit=4`)).json as unknown as Page;
    expect(first.data.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect(first.next).toBe(4);
    const last = (await api("GET", `/v1/conversations/${id}/messages?cursor=4&limit=4`)).json as unknown as Page;
    expect(last.data.map((m) => m.seq)).toEqual([5, 6]);
    expect(last.next).toBeNull();
    const exact = (await api("GET", `/v1/conversations/${id}/messages?limit=6`)).json as unknown as Page;
    expect(exact.data).toHaveLength(6);
    expect(exact.next).toBeNull();
  });

  it("returns a message larger than the page's bytes alone, and the next page after it", async () => {
    const id = await createConversation();
    const messages = Array.from({ length: 4 }, (_, j) => ({ role: j % 2 ? "assistant" : "user", text: bigText(j) }));
    expect((await api("POST", `/v1/conversations/${id}/import`, { messages })).status).toBe(201);
    await inConversation(id, ({ store }) => {
      // Each message is ~100 KB of JSON: a 50 KB page still holds one, never none.
      const one = store.transcriptPage(0, { limit: 500, maxBytes: 50_000 });
      expect(one.messages.map((m) => m.seq)).toEqual([1]);
      expect(one.more).toBe(true);
      const two = store.transcriptPage(1, { limit: 500, maxBytes: 250_000 });
      expect(two.messages.map((m) => m.seq)).toEqual([2, 3]);
      expect(two.more).toBe(true);
      const rest = store.transcriptPage(3, { limit: 500, maxBytes: 50_000 });
      expect(rest.messages.map((m) => m.seq)).toEqual([4]);
      expect(rest.more).toBe(false);
      expect(store.transcriptPage(4, { limit: 500 })).toEqual({ messages: [], more: false });
    });
  });

  it("weighs a message kept in parts by all its parts", async () => {
    const id = await createConversation();
    const messages = [
      { role: "user", text: "small" },
      { role: "assistant", text: "ok" },
    ];
    expect((await api("POST", `/v1/conversations/${id}/import`, { messages })).status).toBe(201);
    await inConversation(id, ({ store }) => {
      // 1.2 million chars of JSON: over PART_CHARS, so its row's content is empty and its text in parts.
      const huge = "é".repeat(1_200_000);
      store.insertMessages(
        [
          {
            id: "msg_huge",
            seq: 3,
            role: "user",
            content: [{ type: "text", text: huge }],
            createdAt: "2026-01-01T00:00:00.000Z",
          },
        ],
        "test-batch",
        () => 0,
      );
      // Its 2.4 MB of UTF-8 do not fit a 2 MB page after the first two messages.
      const first = store.transcriptPage(0, { limit: 500, maxBytes: 2_000_000 });
      expect(first.messages.map((m) => m.seq)).toEqual([1, 2]);
      expect(first.more).toBe(true);
      const alone = store.transcriptPage(2, { limit: 500, maxBytes: 2_000_000 });
      expect(alone.messages.map((m) => m.seq)).toEqual([3]);
      expect(alone.messages[0].content).toEqual([{ type: "text", text: huge }]);
      expect(alone.more).toBe(false);
      // Under a 3 MB page all three fit.
      expect(store.transcriptPage(0, { limit: 500, maxBytes: 3_000_000 }).messages).toHaveLength(3);
    });
  });
});
