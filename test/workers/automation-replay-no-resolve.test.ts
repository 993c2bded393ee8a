// A retry whose keys were all sent already only replays them on the conversation they went to: it
// resolves no channel, so it neither re-creates a channel deleted meanwhile (a paused automation's
// run) nor rotates an idle channel to a new, empty conversation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, newTenant } from "./helpers";

/** The invocation died between the turn's end and its write: the run is still open. */
const reopen = (runId: string) =>
  env.DB.prepare(
    `UPDATE automation_runs SET status = 'retrying', finished_at = NULL, conversation_id = NULL WHERE id = ?`,
  )
    .bind(runId)
    .run();
const conversationCount = async (key: string) =>
  (await api("GET", "/v1/conversations?limit=100", undefined, { key })).json.data.length as number;

describe("a retry that only replays its keys", () => {
  it("does not re-create a channel deleted while its automation was paused", async () => {
    const key = await newTenant();
    const { runId, automationId, channel, run } = await claimedRun(key, {
      prompt: "digest",
      label: "rplnores",
      year: 2049,
    });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).toBeNull();
    const a = (await run())!.conversationId as string;
    await reopen(runId);
    expect((await api("DELETE", `/v1/channels/${channel}`, undefined, { key })).status).toBe(204);
    expect((await api("POST", `/v1/automations/${automationId}/pause`, undefined, { key })).status).toBe(200);
    const before = await conversationCount(key);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).toBeNull();
    const after = (await run())!;
    expect(after).toMatchObject({ status: "succeeded", conversationId: a });
    expect((await api("GET", `/v1/channels/${channel}`, undefined, { key })).status).toBe(404);
    expect(await conversationCount(key)).toBe(before);
  }, 60_000);

  it("does not rotate an idle channel to a new empty conversation", async () => {
    const key = await newTenant();
    const { runId, channel, run } = await claimedRun(key, { prompt: "digest", label: "rplnorot", year: 2049 });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).toBeNull();
    const a = (await run())!.conversationId as string;
    await reopen(runId);
    // The channel goes idle: past its rotation time since the turn ended.
    expect((await api("PATCH", `/v1/channels/${channel}`, { rotationSeconds: 1 }, { key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const before = await conversationCount(key);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).toBeNull();
    expect(await run()).toMatchObject({ status: "succeeded", conversationId: a });
    const view = await api("GET", `/v1/channels/${channel}`, undefined, { key });
    expect(view.json).toMatchObject({ conversationId: a, rotations: 0 });
    expect(await conversationCount(key)).toBe(before);
  }, 60_000);
});
