// A run's turn keys live in the conversation that received them: a retry after the channel moved
// (deleted, rotated, or the automation's channel changed) takes the outcome of the turns sent from
// that conversation, and a turn it starts on the channel's new conversation is a new turn: none
// while the automation is paused, and never without a tenant turn token.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, newTenant, transcript } from "./helpers";

const pause = (automationId: string, key: string) =>
  api("POST", `/v1/automations/${automationId}/pause`, undefined, { key });
const limitedEnv = () => ({ ...env, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1" }) as Env;
/** The invocation died after the turn ended, before it recorded the outcome. */
const reopen = (runId: string) =>
  env.DB.prepare(
    `UPDATE automation_runs SET status = 'running', conversation_id = NULL, usage = NULL, finished_at = NULL WHERE id = ?`,
  )
    .bind(runId)
    .run();
/** The channel's conversation now (a post to it), so the test can see which turns it ran. */
const channelConversation = async (channel: string, key: string) => {
  const r = await api("GET", `/v1/channels/${channel}`, undefined, { key });
  return r.status === 200 ? (r.json.conversationId as string | undefined) : undefined;
};

describe("a run retried after its channel moved", () => {
  it("starts no turn after the earlier attempt's turn failed (channel deleted, automation paused)", async () => {
    const key = await newTenant();
    const { runId, automationId, channel, run } = await claimedRun(key, {
      prompt: "daily digest\n@model-error 400",
      label: "cgpmv",
      year: 2046,
    });
    expect(await runAutomation(env as Env, runId, 1)).not.toBeNull();
    expect((await pause(automationId, key)).status).toBe(200);
    expect((await api("DELETE", `/v1/channels/${channel}`, undefined, { key })).status).toBe(204);
    await env.DB.prepare(`UPDATE automation_runs SET prompt = 'daily digest' WHERE id = ?`).bind(runId).run();
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done.status).toBe("failed");
    expect(String(done.error)).toContain("paused");
  }, 60_000);

  it("a new turn on the moved channel takes a tenant turn token", async () => {
    const limited = limitedEnv();
    const key = await newTenant();
    const { runId, channel, run } = await claimedRun(key, { prompt: "daily digest", label: "cgpmw", year: 2046 });
    expect(await runAutomation(limited, runId, 1)).toBeNull();
    const first = (await run())!;
    await reopen(runId);
    expect((await api("DELETE", `/v1/channels/${channel}`, undefined, { key })).status).toBe(204);
    await runAutomation(limited, runId, 2);
    const done = (await run())!;
    expect(done.conversationId === first.conversationId || done.status === "retrying").toBe(true);
  }, 60_000);

  it("a run whose conversation was deleted starts its new turn only with a tenant turn token", async () => {
    const limited = limitedEnv();
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: "daily digest", label: "cgpmx", year: 2046 });
    expect(await runAutomation(limited, runId, 1)).toBeNull();
    const first = (await run())!;
    expect(first.status).toBe("succeeded");
    await reopen(runId);
    const del = await api("DELETE", `/v1/conversations/${first.conversationId}`, undefined, { key });
    expect([200, 202, 204]).toContain(del.status);
    const error = await runAutomation(limited, runId, 2);
    expect(error).toContain("limit");
    expect((await run())!.status).toBe("retrying");
  }, 60_000);

  it("takes the outcome from the conversation the turn went to after the automation's channel changed", async () => {
    const limited = limitedEnv();
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, { prompt: "daily digest", label: "cgpmy", year: 2046 });
    expect(await runAutomation(limited, runId, 1)).toBeNull();
    const first = (await run())!;
    await reopen(runId);
    const patched = await api("PATCH", `/v1/automations/${automationId}`, { channel: "cgpmy-moved" }, { key });
    expect(patched.status).toBe(200);
    expect(await runAutomation(limited, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", conversationId: first.conversationId, attempts: 2 });
    expect((await transcript(String(first.conversationId), key)).map((m) => m.role)).toEqual(["user", "assistant"]);
    const moved = await channelConversation("cgpmy-moved", key);
    if (moved) expect(await transcript(moved, key)).toEqual([]);
  }, 60_000);

  it("runs no turn on the new channel when paused after the earlier attempt's turn failed", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, {
      prompt: "daily digest\n@model-error 400",
      label: "cgpmz",
      year: 2046,
    });
    expect(await runAutomation(env as Env, runId, 1)).not.toBeNull();
    const patched = await api("PATCH", `/v1/automations/${automationId}`, { channel: "cgpmz-moved" }, { key });
    expect(patched.status).toBe(200);
    expect((await pause(automationId, key)).status).toBe(200);
    await env.DB.prepare(`UPDATE automation_runs SET prompt = 'daily digest' WHERE id = ?`).bind(runId).run();
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done.status).toBe("failed");
    expect(String(done.error)).toContain("paused");
    const moved = await channelConversation("cgpmz-moved", key);
    if (moved) expect(await transcript(moved, key)).toEqual([]);
  }, 60_000);

  it("a later attempt replays only the keys sent to the new conversation, not the earlier ones", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, {
      prompt: "daily digest\n@model-error 400",
      label: "cgpmu",
      year: 2046,
    });
    expect(await runAutomation(env as Env, runId, 1)).not.toBeNull();
    const failedOn = (await run())!.conversationId;
    const patched = await api("PATCH", `/v1/automations/${automationId}`, { channel: "cgpmu-moved" }, { key });
    expect(patched.status).toBe(200);
    await env.DB.prepare(`UPDATE automation_runs SET prompt = 'daily digest' WHERE id = ?`).bind(runId).run();
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const second = (await run())!;
    expect(second.status).toBe("succeeded");
    expect(second.conversationId).not.toBe(failedOn);
    await reopen(runId);
    expect(await runAutomation(env as Env, runId, 3)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", conversationId: second.conversationId, attempts: 3 });
    // Key 2's turn replayed; key 1 (sent to the old channel's conversation) started none here.
    expect((await transcript(String(done.conversationId), key)).map((m) => m.role)).toEqual(["user", "assistant"]);
  }, 60_000);
});
