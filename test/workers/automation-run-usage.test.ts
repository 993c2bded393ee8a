// A run's usage is the sum of its attempts' turns, failed ones included: what the ledger
// (GET /v1/usage) bills for the run's conversation, not the last turn's alone nor nothing.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Usage } from "../../core/types";
import { recordDeadRun } from "../../services/automations";
import { runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { api, eventually, newTenant } from "./helpers";

/** The ledger's totals for the conversation once it holds `turns` turns. */
const ledger = (key: string, conversationId: string, turns: number) =>
  eventually(async () => {
    const r = await api("GET", `/v1/usage?conversation=${conversationId}`, undefined, { key });
    return r.json.total?.turns === turns ? r.json.total : null;
  }, 20_000);

describe("a run's usage", () => {
  it("sums the turns of every attempt when each fails, as the ledger bills them", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, {
      prompt: 'report\n@tool memory_search {"query":"status"}\n@model-error 400 call=2',
      label: "usagedead",
      year: 2041,
    });
    for (const attempt of [1, 2, 3]) expect(await runAutomationAttempt(env as Env, { runId, attempt })).not.toBeNull();
    await recordDeadRun(env.DB, runId);
    const dead = (await run())!;
    expect(dead.status).toBe("failed");
    const billed = await ledger(key, String(dead.conversationId), 3);
    const usage = dead.usage as Usage;
    expect(usage).not.toBeNull();
    expect(usage.output_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBe(billed.output_tokens);
    expect(usage.input_tokens).toBe(billed.input_tokens);
    expect(usage.cost_usd).toBeCloseTo(billed.cost_usd, 6);
  }, 60_000);

  it("adds a failed attempt's turn to the turn of the attempt that succeeds", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, {
      prompt: 'report\n@tool memory_search {"query":"status"}\n@model-error 400 call=2',
      label: "usageretry",
      year: 2041,
    });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).not.toBeNull();
    // The provider recovers (here: the prompt the run sends, fixed at its first attempt, no longer
    // asks the offline model to fail; an edit of the automation's prompt would not reach this run).
    await env.DB.prepare(`UPDATE automation_runs SET prompt = 'report' WHERE id = ?`).bind(runId).run();
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).toBeNull();
    const done = (await run())!;
    expect(done.status).toBe("succeeded");
    const billed = await ledger(key, String(done.conversationId), 2);
    const usage = done.usage as Usage;
    expect(usage.output_tokens).toBe(billed.output_tokens);
    expect(usage.cost_usd).toBeCloseTo(billed.cost_usd, 6);
  }, 60_000);
});
