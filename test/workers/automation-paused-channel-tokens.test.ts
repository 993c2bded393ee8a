// An automation attempt takes one tenant turn token for the turn it starts, and gives back any it
// took for a turn request refused before a turn started (docs/api-notes.md, "Rate limits" and
// "Automations"): an attempt waiting out a channel conversation paused on client tools knocks again
// and again, and a key another prompt used is passed for the next, but neither spends the tenant's
// turns. A plain run still spends exactly one.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AttemptClock, runAutomationAttempt } from "../../workers/chat/automation-runner";
import { callWith } from "./app-with-vars";
import { claimedRun, createClientTool, pauseChannelOnClientTool } from "./automation-helpers";
import { api, createConversation, newTenant } from "./helpers";

/** The worker's env with this tenant turn limit (the suite sets it off). */
const limitedTo = (perMinute: number) => ({ ...env, TENANT_TURN_RATE_LIMIT_PER_MINUTE: String(perMinute) }) as Env;

/** The attempt's clock, whose waits pass at once (the rate limiter keeps real time). */
function fastClock(): AttemptClock {
  let skew = 0;
  return {
    now: () => Date.now() + skew,
    sleep: async (ms: number) => {
      skew += ms;
    },
  };
}

/** The tenant's own turn on a conversation of its own, under the same tenant turn limit: its status. */
async function ownTurn(key: string, perMinute: number): Promise<number> {
  const id = await createConversation(undefined, key);
  const vars = {
    RATE_LIMIT_PER_MINUTE: "0",
    TURN_RATE_LIMIT_PER_MINUTE: "0",
    TENANT_TURN_RATE_LIMIT_PER_MINUTE: String(perMinute),
  };
  const r = await callWith(vars, {
    method: "POST",
    path: `/v1/conversations/${id}/messages`,
    key,
    body: { content: "hi" },
  });
  return r.status;
}

describe("an automation attempt and the tenant's turn tokens", () => {
  it("spends none waiting out a channel conversation paused on client tools, and says why it failed", async () => {
    const key = await newTenant();
    await createClientTool(key, "ask_person");
    const { runId, channel, run } = await claimedRun(key, { prompt: "daily digest", label: "pausedtok", year: 2047 });
    // A person's turn on the channel pauses on a client tool: the channel's conversation refuses turns.
    await pauseChannelOnClientTool(key, { channel, tool: "ask_person" });

    const failure = await runAutomationAttempt(limitedTo(3), { runId, attempt: 1, clock: fastClock() });
    expect(failure).toMatch(/waiting on client tool results/);
    const recorded = (await run())!;
    expect(recorded.status).toBe("retrying");
    expect(String(recorded.error)).toMatch(/waiting on client tool results for a turn that is not this run's/);
    expect(String(recorded.error)).not.toMatch(/limit/);

    // The attempt ran no turn: the tenant still has its three turns of the minute.
    expect([await ownTurn(key, 3), await ownTurn(key, 3), await ownTurn(key, 3)]).toEqual([200, 200, 200]);
  }, 60_000);

  it("spends one for a run whose first key another prompt used", async () => {
    const key = await newTenant();
    const { runId, channel, run } = await claimedRun(key, { prompt: "daily digest", label: "reusedtok", year: 2047 });
    // The channel's conversation already knows the run's first key, sent with another prompt.
    const person = await api("POST", `/v1/channels/${channel}/messages`, { content: "hello" }, { key });
    expect(person.status, person.text).toBe(200);
    const conversationId = String(person.json.conversationId);
    const keyed = await api(
      "POST",
      `/v1/conversations/${conversationId}/messages`,
      { content: "something else" },
      { key, headers: { "idempotency-key": `automation-run:${runId}:1` } },
    );
    expect(keyed.status, keyed.text).toBe(200);

    expect(await runAutomationAttempt(limitedTo(2), { runId, attempt: 1, clock: fastClock() })).toBeNull();
    expect((await run())!).toMatchObject({ status: "succeeded", conversationId });
    // Its refused first key gave its token back: of two, the run's turn took one.
    expect([await ownTurn(key, 2), await ownTurn(key, 2)]).toEqual([200, 429]);
  }, 60_000);

  it("spends exactly one for a plain run's turn", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: "daily digest", label: "plaintok", year: 2047 });
    expect(await runAutomationAttempt(limitedTo(2), { runId, attempt: 1, clock: fastClock() })).toBeNull();
    expect((await run())!.status).toBe("succeeded");
    expect([await ownTurn(key, 2), await ownTurn(key, 2)]).toEqual([200, 429]);
  }, 60_000);
});
