// A slot's prompt runs once: a redelivery after the automation's prompt was edited sends the prompt
// the run started with, so its turn key replays the crashed attempt's turn instead of running the
// new prompt as a second turn.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, newTenant, textOf, transcript } from "./helpers";

/** The invocation died after the run's turn ended, before it recorded the outcome. */
const crashAfterTurn = (runId: string) =>
  env.DB.prepare(
    `UPDATE automation_runs SET status = 'running', conversation_id = NULL, usage = NULL, finished_at = NULL WHERE id = ?`,
  )
    .bind(runId)
    .run();

describe("an automation run whose prompt is edited between attempts", () => {
  it("replays the crashed attempt's turn instead of running the new prompt", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, { prompt: "daily digest", label: "bmprm", year: 2043 });
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const first = (await run())!;
    expect(first.status).toBe("succeeded");
    await crashAfterTurn(runId);
    expect((await api("PATCH", `/v1/automations/${automationId}`, { prompt: "weekly digest" }, { key })).status).toBe(
      200,
    );
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "succeeded", attempts: 2, conversationId: first.conversationId });
    const users = (await transcript(String(done.conversationId), key)).filter((m) => m.role === "user").map(textOf);
    expect(users).toEqual(["daily digest"]);
  });

  it("runs the edited prompt in a slot whose run had not started before the edit", async () => {
    const key = await newTenant();
    const { runId, automationId, run } = await claimedRun(key, { prompt: "daily digest", label: "bmprn", year: 2043 });
    await api("PATCH", `/v1/automations/${automationId}`, { prompt: "weekly digest" }, { key });
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const done = (await run())!;
    expect(done.status).toBe("succeeded");
    const users = (await transcript(String(done.conversationId), key)).filter((m) => m.role === "user").map(textOf);
    expect(users).toEqual(["weekly digest"]);
  });
});
