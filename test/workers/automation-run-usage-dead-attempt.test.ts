// A run's usage counts every turn of the run once, whichever attempt records it: the failed turn
// of an attempt whose invocation died before its D1 write (or while a later delivery waited for
// it) is added by the attempt that passes over its key, and a turn an attempt recorded is not
// added again by the next one. The run's usage then agrees with what GET /v1/usage bills.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Usage } from "../../core/types";
import { runAutomationAttempt } from "../../workers/chat/automation-runner";
import { claimedRun, createClientTool } from "./automation-helpers";
import { api, eventually, newTenant, transcript } from "./helpers";

/** Every turn fails on its second model call, after a tool call: each spends tokens and bills a turn. */
const FAILING = 'report\n@tool memory_search {"query":"status"}\n@model-error 400 call=2';

/** The ledger's totals for the conversation once it holds `turns` turns. */
const ledger = (key: string, conversationId: string, turns: number) =>
  eventually(async () => {
    const r = await api("GET", `/v1/usage?conversation=${conversationId}`, undefined, { key });
    return r.json.total?.turns === turns ? r.json.total : null;
  }, 20_000);

/** The run as its attempt left it, had its invocation died after the turn ended, before its D1 write. */
const forgetLastWrite = (runId: string) =>
  env.DB.prepare(`UPDATE automation_runs SET status = 'running', usage = NULL, error = NULL WHERE id = ?`)
    .bind(runId)
    .run();

/** The run's row as it is (every column, whatever the schema has). */
const rowOf = async (runId: string) =>
  (await env.DB.prepare(`SELECT * FROM automation_runs WHERE id = ?`).bind(runId).first<Record<string, unknown>>())!;

/**
 * The run as an attempt that died before its D1 write leaves it: every column as it was before the
 * attempt (`before`), but running under the attempt's count, as its startRun left it.
 */
async function diedBeforeWrite(runId: string, before: Record<string, unknown>) {
  const columns = Object.keys(before).filter((c) => !["id", "status", "attempts", "started_at"].includes(c));
  await env.DB.prepare(
    `UPDATE automation_runs SET status = 'running', ${columns.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`,
  )
    .bind(...columns.map((c) => before[c] ?? null), runId)
    .run();
}

/** The run's usage is what the ledger bills (`billed`: GET /v1/usage's total). */
const agrees = (usage: Usage, billed: { output_tokens: number; input_tokens: number; cost_usd: number }) => {
  expect(usage.output_tokens).toBeGreaterThan(0);
  expect(usage.output_tokens).toBe(billed.output_tokens);
  expect(usage.input_tokens).toBe(billed.input_tokens);
  expect(usage.cost_usd).toBeCloseTo(billed.cost_usd, 6);
};

/** The worker's bindings with every conversation stub's stopTurn throwing. */
function withFailingStop(): Env {
  const namespace = env.CONVERSATION;
  const stop = async () => {
    throw new Error("the object was reset");
  };
  const wrapped = new Proxy(namespace, {
    get(target, prop) {
      if (prop !== "get") {
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (...args: Parameters<typeof namespace.get>) =>
        new Proxy(target.get(...args), {
          get: (stub, name) => (name === "stopTurn" ? stop : Reflect.get(stub, name)),
        });
    },
  });
  return { ...(env as Env), CONVERSATION: wrapped };
}

describe("a run's usage after an attempt that died", () => {
  it("adds the failed turn of an attempt that died before its D1 write, passed over by the retry", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: FAILING, label: "usagedeadwrite", year: 2043 });
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).not.toBeNull();
    await forgetLastWrite(runId);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).not.toBeNull();
    const r = (await run())!;
    expect(r).toMatchObject({ status: "retrying", attempts: 2 });
    agrees(r.usage as Usage, await ledger(key, String(r.conversationId), 2));
  }, 60_000);

  it("does not add again a failed turn an earlier attempt recorded, nor one a retry added", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, { prompt: FAILING, label: "usagedeadonce", year: 2043 });
    // Attempt 1 records its turn (key 1); attempt 2 passes over it and records its own (key 2).
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 1 })).not.toBeNull();
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).not.toBeNull();
    const second = (await run())!;
    agrees(second.usage as Usage, await ledger(key, String(second.conversationId), 2));
    // Attempt 3 passes over keys 1 and 2 (both counted) and runs key 3; it dies before its write,
    // and attempt 4 passes over keys 1 to 3, adding only key 3, then runs key 4.
    const before = await rowOf(runId);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 3 })).not.toBeNull();
    await diedBeforeWrite(runId, before);
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 4 })).not.toBeNull();
    const r = (await run())!;
    expect(r.attempts).toBe(4);
    agrees(r.usage as Usage, await ledger(key, String(r.conversationId), 4));
  }, 90_000);

  it("adds the failed turn of an attempt taken over while its turn still ran, which the retry waited for", async () => {
    const key = await newTenant();
    const { runId, run } = await claimedRun(key, {
      prompt: `${FAILING}\n@reply-chars 300\n@stream-pace 150`,
      label: "usagedeadwait",
      year: 2043,
    });
    // Attempt 1's invocation (here still alive: its turn runs in the conversation's object).
    const dying = runAutomationAttempt(env as Env, { runId, attempt: 1 });
    const conversationId = await eventually(async () => {
      const channels = (await api("GET", "/v1/channels", undefined, { key })).json.data as {
        conversationId?: string;
      }[];
      const id = channels[0]?.conversationId;
      return id && (await transcript(id, key)).length > 0 ? id : null;
    });
    // The queue redelivers while key 1's turn still runs: attempt 2 takes the run over and waits
    // (idempotency_in_progress); the turn fails, attempt 1 no longer holds the run and records nothing.
    const retry = runAutomationAttempt(env as Env, { runId, attempt: 2 });
    expect(await dying).toBeNull();
    expect(await retry).not.toBeNull();
    const r = (await run())!;
    expect(r).toMatchObject({ status: "retrying", attempts: 2, conversationId });
    agrees(r.usage as Usage, await ledger(key, conversationId, 2));
  }, 90_000);

  it("counts a paused turn whose stop failed when the attempt records it, and not again when a retry stops it", async () => {
    const key = await newTenant();
    await createClientTool(key, "pick_colour");
    const { runId, run } = await claimedRun(key, {
      prompt: 'report\n@tool tool_activate {"name":"pick_colour"}\n@tool pick_colour {}',
      label: "usagestopfail",
      year: 2043,
    });
    expect(await runAutomationAttempt(withFailingStop(), { runId, attempt: 1 })).toMatch(/stopping it failed/);
    const retrying = (await run())!;
    expect(retrying).toMatchObject({ status: "retrying", attempts: 1 });
    const billed = await ledger(key, String(retrying.conversationId), 1);
    agrees(retrying.usage as Usage, billed);
    // The retry takes the paused turn again by its key and stops it: the same turn, counted once.
    expect(await runAutomationAttempt(env as Env, { runId, attempt: 2 })).toBeNull();
    const r = (await run())!;
    expect(r).toMatchObject({ status: "failed", attempts: 2 });
    agrees(r.usage as Usage, await ledger(key, String(r.conversationId), 1));
  }, 60_000);
});
