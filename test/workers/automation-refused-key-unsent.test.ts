// A run's turn key refused with turn_paused (a person's turn on the channel waits on client tools)
// was never sent: no turn exists under it. The attempt that got the refusal takes its mark back, so
// when the automation is paused before the retry, the retry records the slot `skipped` and starts
// no turn, as for a run none of whose keys reached the conversation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AttemptClock, runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun, createClientTool, pauseChannelOnClientTool } from "./automation-helpers";
import { api, newTenant, transcript } from "./helpers";

/** The platform's clock, but its first wait moves time on by 20 minutes: the attempt runs out of time. */
function outOfTimeClock(): AttemptClock {
  let skew = 0;
  return {
    now: () => Date.now() + skew,
    sleep: async (ms: number) => {
      skew += 20 * 60_000;
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
}

describe("a run's key refused with turn_paused", () => {
  it("is not counted as sent: paused before the retry, the run is skipped and no turn starts", async () => {
    const key = await newTenant();
    await createClientTool(key, "ask_person");
    const { runId, automationId, channel, run } = await claimedRun(key, {
      prompt: "daily digest",
      label: "unsentkey",
      year: 2046,
    });
    // A person's turn on the channel pauses on a client tool: the channel's conversation refuses turns.
    const person = await pauseChannelOnClientTool(key, { channel, tool: "ask_person" });

    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 1, clock: outOfTimeClock() });
    expect(failure).not.toBeNull();
    const row = await env.DB.prepare(`SELECT turn_keys_sent AS sent FROM automation_runs WHERE id = ?`)
      .bind(runId)
      .first<{ sent: number }>();
    expect(row?.sent).toBe(0);

    // The person's turn ends; the automation is paused before the queue's retry.
    const conv = person.conversationId;
    const stop = await api("POST", `/v1/conversations/${conv}/stop`, { turnId: person.turnId }, { key });
    expect(stop.status, stop.text).toBe(200);
    expect((await api("POST", `/v1/automations/${automationId}/pause`, undefined, { key })).status).toBe(200);

    await runAutomationAttempt(env as Env, { runId, attempt: 2 });
    expect(await run()).toMatchObject({ status: "skipped", error: "paused" });
    const prompts = (await transcript(conv, key)).filter(
      (m) => m.role === "user" && m.content.some((b) => b.type === "text" && b.text === "daily digest"),
    );
    expect(prompts).toHaveLength(0);
  });
});
