// Folding a long import: each fold takes one threshold of growth from the front of the tail, and
// reads about that much of it. A fold that read the whole tail (decoded from SQLite, then a stubbing
// pass over all of it) made folding an import of N messages cost O(N²) of the object's CPU: ~N/80
// folds, each over what was left (a 50,000-message import took tens of seconds). Counted here as
// the work the folds do, not timed: the rows each fold decodes from the store and the messages of
// the cached tail its source reads.
import { describe, expect, it } from "vitest";
import { withoutRefusedTurns } from "../../core/replay-rules";
import { turnByTurnFoldLength } from "../../core/fold";
import type { StoredMessage } from "../../core/types";
import { masterMessages } from "../../durable-objects/conversation/regenerate";
import { api, inConversation, newTenantWithId } from "./helpers";

const chat = (n: number) => [
  { role: "user", content: `question ${n} ${"q".repeat(300)}` },
  { role: "assistant", content: `answer ${n} ${"a".repeat(600)}` },
];
// A tool exchange whose 3,000-char result the replay shows as a stub once it is stale.
const tool = (n: number) => [
  { role: "user", content: `read file ${n}` },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: `toolu_${n}`, name: "memory_search", input: { query: `f${n}` } }],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${n}`, content: `${n % 10}`.repeat(3_000) }] },
  { role: "assistant", content: `file ${n} read` },
];

const FOLDS = 4;

describe("folding a long import", () => {
  it("reads one region of the tail per fold, never the whole tail", async () => {
    const { tenantId, key } = await newTenantWithId();
    // The import sends no fold of its own: the folds below are run one at a time and counted.
    const put = await api("PUT", "/v1/settings", { settings: { foldThresholdChars: 50_000_000 } }, { key });
    expect(put.status).toBe(200);
    const messages = Array.from({ length: 200 }, (_, n) => [...chat(n), ...tool(n)]).flat(); // 1,200 messages
    const imported = await api("POST", "/v1/conversations/import", { messages }, { key });
    expect(imported.status, imported.text).toBe(201);
    const id = (imported.json as { id: string }).id;
    const patched = await api("PATCH", `/v1/conversations/${id}`, { settings: { foldThresholdChars: 4_000 } }, { key });
    expect(patched.status).toBe(200);

    const folds = await inConversation(id, async (i) => {
      const { fold, store, cache } = i;
      const head = await i.record.load({ tenantId, conversationId: id });
      expect(head).toBeTruthy();
      expect(store.getLease()).toBeNull();
      // The tail is read from SQLite into the replay cache once (every turn needs it), not per fold.
      cache.replaySource(head!);
      let rows = 0;
      const read = new Set<number>();
      const { listAfter, range } = store;
      const { replaySource } = cache;
      const { maybeDispatch } = fold;
      store.listAfter = (after: number, limit: number) => {
        const got = listAfter.call(store, after, limit);
        rows += got.length;
        return got;
      };
      store.range = (from: number, to: number) => {
        const got = range.call(store, from, to);
        rows += got.length;
        return got;
      };
      cache.replaySource = (h) =>
        new Proxy(replaySource.call(cache, h), {
          get(target, prop, receiver) {
            if (typeof prop === "string" && /^\d+$/.test(prop)) read.add(Number(prop));
            return Reflect.get(target, prop, receiver);
          },
        });
      // The next fold is run here, not sent to the queue.
      fold.maybeDispatch = async () => {};
      const out: { tail: number; region: number; sourceReads: number; commitRows: number; applied: boolean }[] = [];
      try {
        for (let k = 0; k < FOLDS; k++) {
          const now = i.record.head!;
          const through = now.summarizedThroughMessage ?? 0;
          // What the fold took when it read the whole tail: its region is the same.
          const whole = withoutRefusedTurns(
            masterMessages(listAfter.call(store, through, Number.MAX_SAFE_INTEGER), now),
            true,
          ) as StoredMessage[];
          const { tailMessages, foldThresholdChars } = now.settings;
          const expected = whole
            .slice(0, turnByTurnFoldLength(whole, tailMessages, foldThresholdChars))
            .map((m) => m.seq);
          const jobId = `fold_reads_${k}`;
          store.putLease({ jobId, dispatchedAt: Date.now(), expiresAt: Date.now() + 600_000 });
          rows = 0;
          read.clear();
          const source = fold.source(now, jobId);
          const sourceReads = rows + read.size;
          expect(source?.region.map((m) => m.seq)).toEqual(expected);
          const boundary = source!.region[source!.plan!.cut];
          rows = 0;
          const committed = await fold.commit({
            jobId,
            kind: "summary",
            summary: `summary of fold ${k}`,
            boundaryMessageId: boundary.id,
            boundarySeq: boundary.seq,
          });
          out.push({
            tail: whole.length,
            region: source!.region.length,
            sourceReads,
            commitRows: rows,
            applied: committed.applied,
          });
        }
      } finally {
        store.listAfter = listAfter;
        store.range = range;
        cache.replaySource = replaySource;
        fold.maybeDispatch = maybeDispatch;
      }
      return out;
    });

    expect(folds).toHaveLength(FOLDS);
    for (const f of folds) {
      expect(f.applied).toBe(true);
      expect(f.tail).toBeGreaterThan(1_100);
      // The region and a bounded lookahead past it: not the tail of 1,100 and more.
      expect(f.sourceReads, JSON.stringify(f)).toBeLessThan(f.region + 200);
      // The commit finds its boundary and what it folds in the cached tail: no row is decoded again.
      expect(f.commitRows, JSON.stringify(f)).toBe(0);
    }
  }, 120_000);
});
