// conversation_read of a range crosses RPC from the other conversation's object, and Workers caps
// an RPC value at 32 MiB while one message may weigh megabytes: a range read is capped by bytes as
// a transcript page is (never fewer than one message), and the tool names the call that reads the
// rest of a range it cut short.
import { describe, expect, it } from "vitest";
import type { ReadMessages, ReadQuery } from "../../agent/tools/registry";
import type { StoredMessage } from "../../core/types";
import { TRANSCRIPT_PAGE_BYTES } from "../../durable-objects/conversation/conversation-store";
import {
  api,
  conversationStub,
  createConversation,
  inConversation,
  newTenantWithId,
  send,
  turnMessages,
} from "./helpers";
import { ofType, resultText } from "../blocks";

const BIG_CHARS = 700_000;
const bigText = (seq: number) => `<${seq}> ${"x".repeat(BIG_CHARS)}`;

/** 50 messages of 700,000 characters (35 MB, over the RPC cap), stored as a turn would store them. */
async function hugeConversation(key: string): Promise<string> {
  const id = await createConversation(undefined, key);
  await inConversation(id, ({ store }) => {
    const messages: StoredMessage[] = Array.from({ length: 50 }, (_, i) => ({
      id: `msg_big${i + 1}`,
      seq: i + 1,
      role: i % 2 ? "assistant" : "user",
      content: [{ type: "text", text: bigText(i + 1) }],
      createdAt: "2026-01-01T00:00:00.000Z",
    }));
    store.insertMessages(messages, "test-batch", () => 0);
  });
  return id;
}

const resultOf = (r: { text: string }) => resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));
const header = (s: string) => s.slice(0, s.indexOf("\n"));

describe("conversation_read ranges are capped by bytes", { timeout: 300_000 }, () => {
  it("reads a 35 MB range of another conversation in byte-bounded reads, each naming the rest", async () => {
    const { key } = await newTenantWithId();
    const big = await hugeConversation(key);
    const reader = await createConversation(undefined, key);
    const seen: number[] = [];
    let call: string | undefined = JSON.stringify({ conversation_id: big, from_seq: 1, to_seq: 50 });
    for (let reads = 0; call; reads++) {
      expect(reads).toBeLessThan(10);
      const r = await send(reader, `@tool conversation_read ${call}`, key);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
      const out = resultOf(r);
      const head = header(out);
      expect(head, out.slice(0, 300)).toMatch(/messages seq \d+-\d+ of 50/);
      const [from, to] = /messages seq (\d+)-(\d+) of/.exec(head)!.slice(1).map(Number);
      // Never more than one read's bytes, never none.
      expect(to).toBeGreaterThanOrEqual(from);
      expect((to - from + 1) * BIG_CHARS).toBeLessThanOrEqual(TRANSCRIPT_PAGE_BYTES);
      for (let s = from; s <= to; s++) seen.push(s);
      // The first character page starts with the range's first message.
      expect(out).toContain(`<${from}> xxx`);
      const rest = /the rest: conversation_read (\{[^}]*\})/.exec(head);
      if (rest) expect(JSON.parse(rest[1])).toEqual({ conversation_id: big, from_seq: to + 1, to_seq: 50 });
      else expect(to).toBe(50);
      if (reads === 0) {
        // The range's next character page is the same range, and names the rest again.
        const next = /next page: conversation_read (\{.*\})\]/.exec(head)![1];
        const second = header(resultOf(await send(reader, `@tool conversation_read ${next}`, key)));
        expect(second).toContain(`messages seq ${from}-${to} of 50`);
        expect(second).toContain(`the rest: conversation_read ${rest![1]}`);
        expect(second).toMatch(/chars 40000-/);
      }
      call = rest?.[1];
    }
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("bounds a range read by maxBytes and its toSeq, one message at least, naming where it goes on", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const messages = Array.from({ length: 4 }, (_, j) => ({
      role: j % 2 ? "assistant" : "user",
      text: `${j + 1} ${"y".repeat(99_990)}`,
    }));
    expect((await api("POST", `/v1/conversations/${id}/import`, { messages }, { key })).status).toBe(201);
    const stub = conversationStub(id);
    const ref = { tenantId, conversationId: id };
    // Over RPC, as another conversation's tool reads it (typed as the tools see it).
    const read = (query: ReadQuery) => stub.readMessages(ref, query) as unknown as Promise<ReadMessages | null>;
    const seqs = (r: { messages: { seq: number }[] } | null) => r?.messages.map((m) => m.seq);
    // Each message is ~100 KB of JSON.
    const two = await read({ fromSeq: 1, toSeq: 4, limit: 50, maxBytes: 250_000 });
    expect(seqs(two)).toEqual([1, 2]);
    expect(two?.next).toBe(3);
    const one = await read({ fromSeq: 2, toSeq: 4, limit: 50, maxBytes: 50_000 });
    expect(seqs(one)).toEqual([2]);
    expect(one?.next).toBe(3);
    // The asked range ends the read: no `next` for messages past toSeq.
    const within = await read({ fromSeq: 2, toSeq: 3, limit: 50, maxBytes: 250_000 });
    expect(seqs(within)).toEqual([2, 3]);
    expect(within?.next).toBeUndefined();
    const whole = await read({ fromSeq: 1, toSeq: 4, limit: 50 });
    expect(seqs(whole)).toEqual([1, 2, 3, 4]);
    expect(whole?.next).toBeUndefined();
    expect(whole?.messageCount).toBe(4);
  });

  it("names the rest of an explicit to_seq past the 50 messages one call reads", async () => {
    const id = await createConversation();
    const messages = Array.from({ length: 60 }, (_, j) => ({ role: j % 2 ? "assistant" : "user", text: `m${j + 1}` }));
    expect((await api("POST", `/v1/conversations/${id}/import`, { messages })).status).toBe(201);
    const out = resultOf(await send(id, `@tool conversation_read {"from_seq":1,"to_seq":58}`));
    // Of 62: this turn's request and tool call are stored before the tool runs.
    expect(header(out)).toContain(
      `messages seq 1-50 of 62, cut short at seq 50 (the rest: conversation_read {"conversation_id":"${id}","from_seq":51,"to_seq":58})`,
    );
    // A range that ends where it was asked to names no rest.
    const rest = resultOf(await send(id, `@tool conversation_read {"from_seq":51,"to_seq":58}`));
    expect(header(rest)).toContain("messages seq 51-58 of");
    expect(header(rest)).not.toContain("the rest");
  });
});
