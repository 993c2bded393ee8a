// An automation's turns count against the tenant's turn limit (TENANT_TURN_RATE_LIMIT_PER_MINUTE):
// an attempt takes a tenant turn token before it starts a turn, and a refused one fails, naming the
// limit, for the queue to retry; an attempt that only replays an earlier attempt's turn takes none.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun } from "./automation-helpers";
import { newTenant, transcript } from "./helpers";

/** The worker's env with a tenant turn limit of one per minute (the suite sets it off). */
const limited = { ...env, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1" } as Env;

describe("automation turns and the tenant's turn limit", () => {
  it("refuses a run's turn past the limit as a failed attempt to retry, and replays without a token", async () => {
    const key = await newTenant();
    const one = await claimedRun(key, { prompt: "first digest", label: "bmtta", year: 2045 });
    const two = await claimedRun(key, { prompt: "second digest", label: "bmtta", year: 2045 });
    expect(await runAutomation(limited, one.runId, 1)).toBeNull();
    const first = (await one.run())!;
    expect(first.status).toBe("succeeded");

    const refused = await runAutomation(limited, two.runId, 1);
    expect(refused).toMatch(/this tenant is over its limit of 1 turns per minute/);
    const waiting = (await two.run())!;
    expect(waiting).toMatchObject({ status: "retrying", attempts: 1, usage: null });
    expect(String(waiting.error)).toMatch(/limit of 1 turns per minute/);
    // No turn ran on the run's channel.
    if (waiting.conversationId) expect(await transcript(String(waiting.conversationId), key)).toEqual([]);

    // The first run's attempt died after its turn: the redelivery replays the turn, taking no token.
    await env.DB.prepare(
      `UPDATE automation_runs SET status = 'running', conversation_id = NULL, usage = NULL, finished_at = NULL WHERE id = ?`,
    )
      .bind(one.runId)
      .run();
    expect(await runAutomation(limited, one.runId, 2)).toBeNull();
    const replayed = (await one.run())!;
    expect(replayed).toMatchObject({ status: "succeeded", attempts: 2, conversationId: first.conversationId });
    expect((await transcript(String(replayed.conversationId), key)).map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
