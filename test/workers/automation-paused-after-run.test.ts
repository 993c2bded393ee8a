// An automation paused after an attempt of its run already ran the run's turn: the redelivery takes
// that turn's outcome (the run is no `skipped` slot), and starts no new turn for the paused automation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, newTenant, transcript } from "./helpers";

const pause = (automationId: string, key: string) =>
  api("POST", `/v1/automations/${automationId}/pause`, undefined, { key });

describe("a run redelivered after its automation was paused", () => {
  it("takes the outcome of the turn an earlier attempt ran", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, { prompt: "daily digest", label: "bmpau", year: 2044 });
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const first = (await run())!;
    expect(first.status).toBe("succeeded");
    // The invocation died after the turn ended, before it recorded the outcome.
    await env.DB.prepare(
      `UPDATE automation_runs SET status = 'running', conversation_id = NULL, usage = NULL, finished_at = NULL WHERE id = ?`,
    )
      .bind(runId)
      .run();
    expect((await pause(automationId, key)).status).toBe(200);
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, conversationId: first.conversationId, error: null });
    expect(done.usage).toEqual(first.usage);
    expect((await transcript(String(done.conversationId), key)).map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("runs no new turn when the earlier attempt's turn failed: the run fails, saying it was paused", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, {
      prompt: "daily digest\n@model-error 400",
      label: "bmpav",
      year: 2044,
    });
    const error = await runAutomation(env as Env, runId, 1);
    expect(error).not.toBeNull();
    const first = (await run())!;
    expect(first.status).toBe("retrying");
    expect((await pause(automationId, key)).status).toBe(200);
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done.status).toBe("failed");
    expect(String(done.error)).toContain("paused");
    expect(
      (await transcript(String(done.conversationId ?? first.conversationId), key)).filter((m) => m.role === "user"),
    ).toHaveLength(1);
  });

  it("is skipped when no earlier attempt ran it", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, { prompt: "daily digest", label: "bmpaw", year: 2044 });
    await pause(automationId, key);
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    expect(await run()).toMatchObject({ status: "skipped", error: "paused", conversationId: null });
  });
});
