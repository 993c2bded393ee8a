// The indexing outbox reads its batches bounded by bytes as well as by count, as a transcript page
// is: a hundred messages of megabytes each would not fit the object's memory, and the alarm would
// retry that same batch for good. Every message is still indexed, in order.
import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../../core/types";
import { TRANSCRIPT_PAGE_BYTES } from "../../durable-objects/conversation/conversation-store";
import { api, createConversation, eventually, inConversation } from "./helpers";

const MB = 1024 * 1024;

/** Each read of stored messages (listAfter, range) on the object's store, in bytes of its JSON. */
function watchReads(store: { listAfter: unknown; range: unknown }): number[] {
  const sizes: number[] = [];
  for (const name of ["listAfter", "range"] as const) {
    const real = (store[name] as (...a: number[]) => StoredMessage[]).bind(store);
    (store as Record<string, unknown>)[name] = (...a: number[]) => {
      const read = real(...a);
      sizes.push(read.reduce((n, m) => n + JSON.stringify(m.content).length, 0));
      return read;
    };
  }
  return sizes;
}

describe("the indexing outbox's batches", () => {
  it("of one long turn far from any refusal never read the turn's earlier messages", async () => {
    const id = await createConversation();
    const sizes = await inConversation(id, async (instance) => {
      await instance.outbox.pending();
      const store = instance.store;
      const at = store.lastSeq();
      const now = new Date().toISOString();
      // One turn: a prompt, then 16 steps of a tool call and its 2 MB result (32 MB in all).
      const turn: StoredMessage[] = [
        {
          id: "msg_long_0",
          seq: at + 1,
          role: "user",
          content: [{ type: "text", text: "read them all" }],
          createdAt: now,
        },
      ];
      for (let i = 0; i < 16; i++) {
        const call = `toolu_long_${i}`;
        turn.push(
          {
            id: `msg_long_c${i}`,
            seq: at + 2 + 2 * i,
            role: "assistant",
            content: [{ type: "tool_use", id: call, name: "file_read", input: { i } }],
            createdAt: now,
          },
          {
            id: `msg_long_r${i}`,
            seq: at + 3 + 2 * i,
            role: "user",
            content: [{ type: "tool_result", tool_use_id: call, content: `part ${i} ${"y ".repeat(MB)}` }],
            createdAt: now,
          },
        );
      }
      store.insertMessages(turn, "test:long", () => 0);
      const reads = watchReads(store);
      await instance.outbox.pending();
      expect(store.indexedThrough()).toBe(store.lastSeq());
      return reads;
    });
    expect(Math.max(...sizes)).toBeLessThanOrEqual(TRANSCRIPT_PAGE_BYTES);
  });

  it("never load more than a transcript page's bytes at once, and index every message", async () => {
    const id = await createConversation();
    const loads = await inConversation(id, async (instance) => {
      await instance.outbox.pending();
      const store = instance.store;
      // Four messages of 5 MB each (20 MB in all), as an import of large pastes would leave.
      const at = store.lastSeq();
      const big = (n: number): StoredMessage => ({
        id: `msg_big_${n}`,
        seq: at + n,
        role: n % 2 ? "user" : "assistant",
        content: [
          { type: "text", text: `${n % 2 ? "pasted" : "answered"} kumquatledger${n} ${"x ".repeat(2.5 * MB)}` },
        ],
        createdAt: new Date().toISOString(),
      });
      store.insertMessages([1, 2, 3, 4].map(big), "test:big", () => 0);
      // What each read of stored messages loaded, in bytes of its JSON.
      const sizes: number[] = [];
      const watch = <K extends "listAfter" | "range">(name: K) => {
        const real = store[name].bind(store) as (...a: number[]) => StoredMessage[];
        (store as unknown as Record<K, (...a: number[]) => StoredMessage[]>)[name] = (...a: number[]) => {
          const read = real(...a);
          sizes.push(read.reduce((n, m) => n + JSON.stringify(m.content).length, 0));
          return read;
        };
      };
      watch("listAfter");
      watch("range");
      await instance.outbox.pending();
      return { sizes, indexedThrough: store.indexedThrough(), lastSeq: store.lastSeq() };
    });
    expect(loads.indexedThrough).toBe(loads.lastSeq);
    expect(Math.max(...loads.sizes)).toBeLessThanOrEqual(TRANSCRIPT_PAGE_BYTES);
    // Indexed: the last of them is found by its word.
    const found = await eventually(async () => {
      const res = await api("GET", "/v1/search?q=kumquatledger4");
      return res.json.data?.length ? res.json.data : null;
    });
    expect(found[0].conversationId).toBe(id);
  });
});
