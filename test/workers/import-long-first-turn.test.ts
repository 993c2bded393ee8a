// An imported conversation far longer than the model's window has no summary yet: its first turns
// replay the whole history while the background folds (one threshold at a time) catch up. The
// request stands in for the oldest run of messages with one pointer message naming the
// conversation_read call that brings them back, so the first turn is answered within the window,
// and the next turn, with nothing else changed, sends the same prefix bytes.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leaseJob } from "./fold-scripted";
import { api, eventually, sendSse } from "./helpers";

const exchange = (i: number, chars: number) => [
  { role: "user", content: `question ${i} about topic-${i} ${"q".repeat(chars)}` },
  { role: "assistant", content: [{ type: "text", text: `answer ${i} ${"a".repeat(chars)}` }] },
];
const endOf = (ev: { type: string; stop_reason?: string }[]) => ev.find((e) => e.type === "turn_end")?.stop_reason;

/** The turn's request snapshots, oldest first (their bodies land in R2 after the turn: waited for). */
async function prompts(id: string, count: number): Promise<ModelRequest[]> {
  const list = await eventually(async () => {
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    return snaps.length >= count ? snaps : null;
  }, 30_000);
  const out: ModelRequest[] = [];
  for (const snap of [...list].reverse())
    out.push(
      await eventually(async () => {
        const r = await api("GET", `/v1/conversations/${id}/prompts/${snap.id}`);
        return r.status === 200 ? (r.json as unknown as ModelRequest) : null;
      }, 30_000),
    );
  return out;
}

/** A message as its bytes go, without the cache breakpoints (they move with the last message). */
const bare = (m: WireMessage) => ({
  role: m.role,
  content:
    typeof m.content === "string"
      ? m.content
      : m.content.map((b) => {
          const { cache_control: _, ...rest } = b as ContentBlock & { cache_control?: unknown };
          return rest;
        }),
});

describe("import of a conversation longer than the window, then its first turns", () => {
  it("the first turn is answered within the window, the second sends the same prefix, the folds take the pointer's place", async () => {
    const msgs = Array.from({ length: 80 }, (_, i) => exchange(i, 3000)).flat(); // 160 messages, ~480k chars
    const imported = await api("POST", "/v1/conversations/import", JSON.stringify({ messages: msgs }), {
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(imported.status, imported.text).toBe(201);
    const id = (imported.json as { id: string }).id;
    // The in-turn compactor stays out of the way (it would rewrite the request): the replay alone must fit.
    expect(
      (await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "offline-40k", compactTriggerRatio: 1 } }))
        .status,
    ).toBe(200);

    const first = await sendSse(id, "first turn after import: what was topic-3 about?");
    const error = first.find((e) => e.type === "error");
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(endOf(first)).toBe("end_turn");
    // No pass of the in-turn compactor was forced by an overflow: the replay itself fit the window.
    expect(first.filter((e) => e.type === "compaction" && e.forced)).toEqual([]);

    const second = await sendSse(id, "second turn: and topic-5?");
    expect(endOf(second)).toBe("end_turn");
    const [one, two] = await prompts(id, 2);
    // Within the window as the settings count it (the offline model enforces its own).
    const estimate = (await api("GET", `/v1/conversations/${id}/replay`)).json as unknown as {
      estimate: { tokens: number; budgetTokens: number };
    };
    expect(estimate.estimate.tokens).toBeLessThanOrEqual(estimate.estimate.budgetTokens);
    // The oldest messages go as one pointer naming the read that brings them back.
    const pointer = JSON.stringify(one.messages[0]);
    expect(pointer).toContain("conversation_read");
    expect(pointer).toMatch(/\\"from_seq\\":1,\\"to_seq\\":\d+/);
    expect(one.messages[0].role).toBe("user");
    // The first request's bytes, the last message's breakpoint aside, open the second's.
    expect(two.messages.slice(0, one.messages.length).map(bare)).toEqual(one.messages.map(bare));
    expect(JSON.stringify(two.messages[two.messages.length - 1])).toContain("second turn: and topic-5?");

    // The folds, when they land, replace the pointer with the summary.
    let folds = 0;
    for (let jobId = await leaseJob(id); jobId && folds < 20; jobId = await leaseJob(id), folds++) {
      await runFoldJob(
        { kind: "fold", jobId, tenantId: "dev", conversationId: id, requestedAt: new Date().toISOString() },
        env as Env,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(folds).toBeGreaterThan(0);
    const later = await sendSse(id, "after the folds: what was topic-3 about?");
    expect(endOf(later)).toBe("end_turn");
    const replay = JSON.stringify((await api("GET", `/v1/conversations/${id}/replay`)).json);
    expect(replay).toContain("<conversation_summary>");
    // A pointer may still stand in for what the folds have not reached yet, never for what they summarized.
    expect(replay).not.toMatch(/Messages 1-\d+ of this conversation \([^)]*\) are not shown here/);
  }, 180_000);
});
