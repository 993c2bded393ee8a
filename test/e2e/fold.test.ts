// Folds through the real queue: the chat worker's DO dispatches, the summarizer worker consumes
// the job and commits by RPC, all inside the running local stack.
import { describe, expect, it } from "vitest";
import { api, newConversation, transcript, textBlocks } from "./client";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the rolling summary on the running stack", () => {
  it("folds in the background through the queue, repeatedly, without losing a message", async () => {
    const id = await newConversation({ foldThresholdChars: 6000, summaryMaxChars: 1500 });
    let folds = 0;
    for (let turn = 0; turn < 30 && folds < 2; turn++) {
      const r = await api("POST", `/v1/conversations/${id}/messages`, {
        content: `turn ${turn}: notes on invoice INV-${1000 + turn}.\n@reply-chars 1200`,
      });
      expect(r.status).toBe(200);
      for (let i = 0; i < 20; i++) {
        const m = (await api("GET", `/v1/conversations/${id}`)).json;
        if (!m.foldInFlight) {
          folds = m.foldCount;
          break;
        }
        await sleep(250);
      }
    }
    expect(folds).toBeGreaterThanOrEqual(2);
    const m = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(m.summary?.length).toBeLessThanOrEqual(1500);
    const t = await transcript(id);
    expect(t.map((x) => x.seq)).toEqual(t.map((_, i) => i + 1));
    const b = t.findIndex((x) => x.id === m.summarizedThroughMessageId);
    expect(t[b].role).toBe("user");
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const preamble = replay.messages[0].content;
    expect(typeof preamble === "string" ? preamble : textBlocks(preamble)[0]).toContain(m.summary);
    expect(replay.messages.length).toBe(2 + t.length - b);
    // The folded invoices are still found by the index.
    const s = (await api("GET", `/v1/search?q=INV-1000&conversation=${id}&kind=message`)).json;
    expect(s.data[0].seq).toBe(1);
  });
});
