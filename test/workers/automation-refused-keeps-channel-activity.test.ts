// An automation's turn that the channel's conversation refuses (409 turn_paused: a person's turn
// there waits on client tools) does nothing: the channel's activity clock stays where the person's
// message left it, as a channel message refused the same way leaves it (workers/chat/turns.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AttemptClock, runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, newTenant } from "./helpers";

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

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("an automation's turn refused by its channel's conversation", () => {
  it("leaves the channel's activity clock as it was", async () => {
    const key = await newTenant();
    const { channel, runId } = await claimedRun(key, { prompt: "daily digest", label: "refusedclock", year: 2047 });
    // A person's turn on the channel pauses on a client tool: the channel's conversation refuses turns.
    const person = await api(
      "POST",
      `/v1/channels/${channel}/messages`,
      { content: '@tool get_weather {"city":"Paris"}', tools: [weather] },
      { key },
    );
    expect(person.status, person.text).toBe(200);
    expect(person.json.requires_action).toBeTruthy();
    const before = await api("GET", `/v1/channels/${channel}`, undefined, { key });
    expect(before.status, before.text).toBe(200);
    expect(before.json.lastActivityAt).toBeTruthy();
    // A later clock for the run than the person's message had.
    await new Promise((resolve) => setTimeout(resolve, 20));

    const failure = await runAutomationAttempt(env as Env, { runId, attempt: 1, clock: outOfTimeClock() });
    expect(failure).not.toBeNull();

    const after = await api("GET", `/v1/channels/${channel}`, undefined, { key });
    expect(after.status, after.text).toBe(200);
    expect(after.json).toEqual(before.json);

    // The person's turn ends: the retry's turn starts, and moves the clock.
    const stop = await api(
      "POST",
      `/v1/conversations/${before.json.conversationId}/stop`,
      { turnId: person.json.turnId },
      { key },
    );
    expect(stop.status, stop.text).toBe(200);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).toBeNull();
    const ran = await api("GET", `/v1/channels/${channel}`, undefined, { key });
    expect(ran.json.conversationId).toBe(before.json.conversationId);
    expect(Date.parse(String(ran.json.lastActivityAt))).toBeGreaterThan(Date.parse(String(before.json.lastActivityAt)));
  });
});
