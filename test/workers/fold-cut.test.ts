// A fold whose prompt budget leaves messages out ends at the last user prompt it showed, and its
// request shows nothing past that cut: no message is both summarized and kept verbatim in the tail.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api, createConversation, inConversation } from "./helpers";
import { recordingClient } from "./recording-client";

describe("a fold cut short by its prompt budget", () => {
  it("shows the model only the messages it folds", async () => {
    // The excerpts' budget (core/fold.ts foldBudgetChars): the window less the reply's max_tokens
    // (the 1,000-char cap and the thinking room), the previous summary and the prompt, in chars
    // (x 1.5) with the 0.8 margin: 20,000 chars at 26,937 tokens.
    const id = await createConversation({
      foldThresholdChars: 1_000_000,
      tailMessages: 8,
      summaryMaxChars: 1_000,
      contextWindowTokens: 26_937,
      outputReserveTokens: 4_000,
      charsPerToken: 1.5,
    });
    const messages = Array.from({ length: 240 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      text: `marker-${i} ${"lorem ipsum ".repeat(7)}`,
    }));
    for (const part of [messages.slice(0, 200), messages.slice(200)])
      expect((await api("POST", `/v1/conversations/${id}/import`, { messages: part })).status).toBe(201);
    await inConversation(id, (i) =>
      i.store.putLease({ jobId: "fold_cut", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    );
    const { client, requests } = recordingClient();
    const job = { kind: "fold" as const, jobId: "fold_cut", tenantId: "dev", conversationId: id, requestedAt: "" };
    expect(await runFoldJob(job, env as Env, { client })).toEqual({ applied: true, reason: "folded" });
    const prompts = requests.map((r) => JSON.stringify(r));
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toMatch(/later messages omitted/);
    const through = (await api("GET", `/v1/conversations/${id}`)).json.summarizedThroughMessage as number;
    const shown = [...prompts[0].matchAll(/\[seq (\d+) /g)].map((m) => Number(m[1]));
    expect(shown.length).toBeGreaterThan(100);
    // Every message up to the boundary was shown, and none after it.
    expect(shown.filter((seq) => seq > through)).toEqual([]);
    expect(Math.max(...shown)).toBe(through);
  });
});
