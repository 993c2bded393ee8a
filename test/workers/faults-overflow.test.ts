// Fault: the provider's overflow 400 ("prompt is too long") in every phase of a turn. The model's
// true window (offline-8k) is smaller than the conversation's settings claim, and the estimate is
// optimistic, so requests pass the compactor's check and the provider refuses them. The turn loop
// then forces one compaction and retries exactly once; when the retry still does not fit (the
// settings overstate the window), the turn ends with a clean context_overflow error, and later
// turns are still taken. (The compaction summary call's overflow: faults-model.test.ts; the fold
// call's: faults-summarizer.test.ts.)
import { describe, expect, it } from "vitest";
import { Ledger, reportInjections } from "./fault-ledger";
import { api, createConversation, sendSse } from "./helpers";
import { ofType } from "../blocks";

describe("fault: overflow 400 in every phase of a turn", () => {
  it("forces one compaction and one retry on the first call and after a tool result, never more, and keeps taking turns", async () => {
    const id = await createConversation({
      model: "offline-8k",
      contextWindowTokens: 10_000,
      outputReserveTokens: 1_000,
      charsPerToken: 5,
    });
    const ledger = new Ledger(id);
    const rows = Array.from({ length: 3000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(2)}`).join("\n");
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, rows, {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    ledger.record((await api("GET", `/v1/conversations/${id}/messages`)).json.data);
    const seen = { "first call": 0, "after a tool result": 0, retriesFailed: 0, answeredAfter: 0 };
    for (let i = 0; i < 40 && (seen["first call"] === 0 || seen["after a tool result"] === 0); i++) {
      const content =
        i % 2
          ? `plain turn ${i}\n@reply-chars 3000`
          : `tool turn ${i}\n@tool file_read {"attachment_id":"${up.json.id}","lines":"${((i * 200) % 2800) + 1}-${((i * 200) % 2800) + 200}"}`;
      const events = await sendSse(id, content);
      ledger.record(events.filter((e) => e.type === "message").map((e) => e.message));
      const end = events.at(-1);
      expect(end!.type).toBe("turn_end");
      // A forced pass has one of two causes, each at most once a turn: the provider's overflow 400
      // (then one retry), or a reply cut off at max_tokens with the window full (docs/api-notes.md
      // "Stop reasons"). Which of them a turn meets depends on where the background fold has got to.
      const forced = { overflow: 0, cut: 0 };
      events.forEach((e, k) => {
        if (e.type !== "compaction_started" || !e.forced) return;
        const since = events.slice(0, k);
        const lastPass = since.findLastIndex((x) => x.type === "compaction_started");
        const cut = since
          .slice(lastPass + 1)
          .some(
            (x) =>
              x.type === "message" &&
              x.message.role === "assistant" &&
              ["max_tokens", "model_context_window_exceeded"].includes(x.message.stopReason ?? ""),
          );
        forced[cut ? "cut" : "overflow"]++;
        if (!cut) seen[since.some((x) => x.type === "tool_result") ? "after a tool result" : "first call"]++;
      });
      // One forced pass per cause; when the overflow's retry still overflows, the turn ends with a clean error.
      expect(forced.overflow).toBeLessThanOrEqual(1);
      expect(forced.cut).toBeLessThanOrEqual(1);
      if (ofType(end, "turn_end").stop_reason === "error") {
        expect(events.find((e) => e.type === "error")!.error.type).toBe("context_overflow");
        seen.retriesFailed++;
      } else if (seen.retriesFailed) seen.answeredAfter++;
      await ledger.check();
    }
    expect(seen["first call"]).toBeGreaterThan(0);
    expect(seen["after a tool result"]).toBeGreaterThan(0);
    // Back to a model whose window the settings tell truly: the conversation answers again.
    await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "offline-12k" } });
    await ledger.survives();
    for (const phase of ["first call", "after a tool result"] as const)
      reportInjections(`overflow 400, ${phase}`, seen[phase]);
    console.log(
      `[faults] overflow: ${seen.retriesFailed} forced retries overflowed again (clean context_overflow errors); ${seen.answeredAfter} turns answered after the first of them`,
    );
  });
});
