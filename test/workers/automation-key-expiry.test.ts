// An automation made by a short-lived key stops with that key: the cron tick claims no slot past
// the creator key's expiry (shown as the automation's expiresAt), and a change of its prompt or
// schedule by a key that never expires makes it lasting again. A file of its own (an isolated
// workerd): the ticks claim every due automation, other files' included.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sortableId } from "../../core/ids";
import { type AttemptClock, runAutomation, runAutomationAttempt } from "../../workers/chat/automation-runner";
import {
  claimedRun,
  createAutomation,
  createClientTool,
  pauseChannelOnClientTool,
  runsOf,
  settled,
  tick,
} from "./automation-helpers";
import { api, eventually, newTenant } from "./helpers";

// An hour years after any key of this test expires.
const HOUR = Date.parse("2035-03-04T05:00:00Z");

const runRows = async (automationId: string) =>
  (
    await env.DB.prepare(`SELECT slot, status FROM automation_runs WHERE automation_id = ? ORDER BY slot`)
      .bind(automationId)
      .all<{ slot: string; status: string }>()
  ).results;

describe("an automation made by a short-lived key", () => {
  it("runs no slot past the key's expiry, until a lasting key changes its prompt", async () => {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status, made.text).toBe(201);
    const short = made.json.apiKey as string;

    const shortAuto = await createAutomation(short, { channel: "short-lived" });
    const lastingAuto = await createAutomation(tenantKey, { channel: "lasting" });
    expect((await api("GET", `/v1/automations/${shortAuto}`, undefined, { key: tenantKey })).json.expiresAt).toBe(ends);
    expect((await api("GET", `/v1/automations/${lastingAuto}`, undefined, { key: tenantKey })).json.expiresAt).toBe(
      null,
    );
    // A change of its name alone keeps the creator's expiry; of its prompt, by a lasting key, clears it.
    const renamed = await api("PATCH", `/v1/automations/${shortAuto}`, { name: "renamed" }, { key: tenantKey });
    expect(renamed.json.expiresAt).toBe(ends);

    await tick(HOUR + 10 * 60_000);
    const ran = await eventually(async () => {
      const r = await runsOf(lastingAuto, tenantKey);
      return settled(r) ? r : null;
    }, 20_000);
    expect(ran[0]).toMatchObject({ status: "succeeded", slot: new Date(HOUR).toISOString() });
    expect(await runRows(shortAuto)).toEqual([]);

    const remade = await api("PATCH", `/v1/automations/${shortAuto}`, { prompt: "hourly digest" }, { key: tenantKey });
    expect(remade.status, remade.text).toBe(200);
    expect(remade.json.expiresAt).toBe(null);
    await tick(HOUR + 3600_000 + 10 * 60_000);
    const back = await eventually(async () => {
      const r = await runsOf(shortAuto, tenantKey);
      return settled(r) ? r : null;
    }, 20_000);
    expect(back.map((r) => [r.slot, r.status])).toEqual([[new Date(HOUR + 3600_000).toISOString(), "succeeded"]]);
  });
});

describe("the same schedule or prompt sent again", () => {
  /** A short-lived key, and an hourly automation of `channel` made by the tenant's lasting key. */
  async function setup(channel: string) {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status, made.text).toBe(201);
    const id = await createAutomation(tenantKey, { channel, schedule: "0 * * * *", prompt: "same prompt" });
    return { tenantKey, short: made.json.apiKey as string, ends, id };
  }

  it("by a short-lived key, as another spelling of the same slots, keeps the automation lasting", async () => {
    const { tenantKey, short, id } = await setup("resched");
    const resched = await api("PATCH", `/v1/automations/${id}`, { schedule: "@hourly" }, { key: short });
    expect(resched.status, resched.text).toBe(200);
    expect(resched.json).toMatchObject({ schedule: "0 * * * *", expiresAt: null });
    expect((await api("GET", `/v1/automations/${id}`, undefined, { key: tenantKey })).json.expiresAt).toBe(null);
  });

  it("by a short-lived key, the same prompt, keeps the automation lasting; a new prompt is the key's", async () => {
    const { short, ends, id } = await setup("reprompt");
    const reprompt = await api("PATCH", `/v1/automations/${id}`, { prompt: "same prompt" }, { key: short });
    expect(reprompt.status, reprompt.text).toBe(200);
    expect(reprompt.json.expiresAt).toBe(null);
    const both = await api(
      "PATCH",
      `/v1/automations/${id}`,
      { prompt: "same prompt", schedule: "0 * * * *", name: "renamed" },
      { key: short },
    );
    expect(both.json).toMatchObject({ name: "renamed", expiresAt: null });
    // A real change of the prompt is the short key's: it runs until that key's expiry.
    const changed = await api("PATCH", `/v1/automations/${id}`, { prompt: "another prompt" }, { key: short });
    expect(changed.json).toMatchObject({ prompt: "another prompt", expiresAt: ends });
  });

  it("by a lasting key keeps a short-lived key's expiry; a real change clears it", async () => {
    const { tenantKey, short, ends, id } = await setup("reverse");
    const changed = await api("PATCH", `/v1/automations/${id}`, { prompt: "another prompt" }, { key: short });
    expect(changed.json.expiresAt).toBe(ends);
    const again = await api(
      "PATCH",
      `/v1/automations/${id}`,
      { prompt: "another prompt", schedule: "@hourly" },
      { key: tenantKey },
    );
    expect(again.status, again.text).toBe(200);
    expect(again.json.expiresAt).toBe(ends);
    const moved = await api("PATCH", `/v1/automations/${id}`, { schedule: "30 * * * *" }, { key: tenantKey });
    expect(moved.json).toMatchObject({ schedule: "30 * * * *", expiresAt: null });
  });
});

describe("a run of a short-lived key's automation delivered after the key expired", () => {
  it("runs no prompt: skipped when no turn was sent, and no retry when an earlier turn failed", async () => {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 2_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status, made.text).toBe(201);
    const short = made.json.apiKey as string;
    // Both claimed while the key was active (runs written as a tick leaves them).
    const unsent = await claimedRun(short, { prompt: "secret digest", label: "expiredunsent", year: 2039 });
    const retried = await claimedRun(short, { prompt: "secret digest", label: "expiredretry", year: 2039 });
    // An earlier attempt of the second sent its turn to a conversation since deleted, its outcome with it.
    await env.DB.prepare(
      `UPDATE automation_runs SET attempts = 1, status = 'retrying', turn_keys_sent = 1, turn_keys_conversation_id = ? WHERE id = ?`,
    )
      .bind(sortableId("conv"), retried.runId)
      .run();
    // Delivered late: a queue backlog, a retry's backoff, a resend of a lost message.
    while (Date.now() <= Date.parse(ends)) await new Promise((resolve) => setTimeout(resolve, 100));

    // The short key reads nothing now: the runs are read with the tenant's lasting key.
    const runOf = async (r: { automationId: string; runId: string }) =>
      (await runsOf(r.automationId, tenantKey)).find((run: { id: string }) => run.id === r.runId);
    expect(await runAutomation(env as Env, unsent.runId, 1)).toBe(null);
    expect(await runOf(unsent)).toMatchObject({
      status: "skipped",
      error: expect.stringContaining(`creator key expired (${ends})`),
      conversationId: null,
      prompt: null,
      usage: null,
    });
    expect(await runAutomation(env as Env, retried.runId, 2)).toBe(null);
    expect(await runOf(retried)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/creator key expired .*the retry was not run/),
      usage: null,
    });
    // No turn ran: the tenant has no conversation at all.
    const listed = await api("GET", "/v1/conversations", undefined, { key: tenantKey });
    expect(listed.json.data).toEqual([]);
  });
});

describe("a run whose attempt waits past the creator key's expiry", () => {
  it("starts no turn after it: skipped, with no prompt stored, when no turn was sent", async () => {
    const tenantKey = await newTenant();
    await createClientTool(tenantKey, "ask_person");
    // Far enough ahead that a slow machine's setup does not reach it, near enough that the attempt,
    // whose clock (below) jumps past it while it waits as a real wait would, still has the time
    // to start a turn (the consumer's limit): only the expiry stops it.
    const ends = new Date(Date.now() + 30_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status, made.text).toBe(201);
    const short = made.json.apiKey as string;
    const { runId, channel, automationId } = await claimedRun(short, {
      prompt: "secret digest",
      label: "expiredwaiting",
      year: 2040,
    });
    // A person's turn paused on a client tool holds the channel's conversation: the attempt, started
    // while the key is active, waits it out (waitOutPause) and knocks again after the key's expiry.
    const person = await pauseChannelOnClientTool(tenantKey, { channel, tool: "ask_person" });
    let slept = 0;
    const clock: AttemptClock = {
      now: () => (slept > 0 ? Date.parse(ends) + 1_000 : Date.now()),
      sleep: async () => {
        slept++;
        await api(
          "POST",
          `/v1/conversations/${person.conversationId}/stop`,
          { turnId: person.turnId },
          { key: tenantKey },
        );
      },
    };
    expect(Date.now()).toBeLessThan(Date.parse(ends));
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1, clock })).toBe(null);
    expect(slept).toBeGreaterThan(0);
    const run = (await runsOf(automationId, tenantKey)).find((r: { id: string }) => r.id === runId);
    expect(run).toMatchObject({
      status: "skipped",
      error: expect.stringContaining(`creator key expired (${ends})`),
      conversationId: null,
      prompt: null,
      usage: null,
    });
    // The channel's conversation holds only the person's turn: the run's prompt was never saved.
    const messages = await api("GET", `/v1/conversations/${person.conversationId}/messages`, undefined, {
      key: tenantKey,
    });
    expect(messages.text).not.toContain("secret digest");
  });
});
