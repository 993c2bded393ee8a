// A run whose turn paused on client tools has that turn stopped (automation-runner.ts). When the
// stop fails (the call throws, or the conversation answers that the turn was not stopped), the
// run must not be recorded as stopped: the attempt fails naming the failed stop and the queue
// retries it; the retry takes the paused turn's outcome again (its key) and stops it. A stop that
// finds the turn no longer waiting (it ended another way) fails the run for good.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun, createClientTool } from "./automation-helpers";
import { api, newTenant } from "./helpers";

type Stop = (...args: unknown[]) => Promise<unknown>;

/** The worker's bindings with every conversation stub's stopTurn replaced by `stop`. */
function withStop(stop: Stop): Env {
  const namespace = env.CONVERSATION;
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

const paused = async (label: string) => {
  const key = await newTenant();
  const name = "pick_colour";
  await createClientTool(key, name);
  const claimed = await claimedRun(key, {
    prompt: `@tool tool_activate {"name":"${name}"}\n@tool ${name} {}`,
    label,
    year: 2039,
  });
  return { key, ...claimed };
};

describe("a paused automation turn whose stop fails", () => {
  it("is not recorded as stopped when the stop throws: the attempt fails, and a retry stops it", async () => {
    const { key, channel, runId, run } = await paused("stopthrows");
    const error = await runAutomation(
      withStop(async () => {
        throw new Error("the object was reset");
      }),
      runId,
      1,
    );
    expect(error).toMatch(/stopping it failed: the object was reset/);
    const failed = (await run())!;
    expect(failed).toMatchObject({ status: "retrying", attempts: 1, finishedAt: null });
    expect(failed.error).toMatch(/^the turn called client tools \(pick_colour\).*stopping it failed/);
    expect(failed.error).not.toMatch(/it was stopped/);
    // The channel's conversation still waits on the call: a person's post is refused.
    const refused = await api("POST", `/v1/channels/${channel}/messages`, { content: "hi" }, { key });
    expect(refused.status).toBe(409);

    // The queue's retry takes the paused turn's outcome again (its key) and stops it for real.
    expect(await runAutomation(env as Env, runId, 2)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "failed", attempts: 2 });
    expect(done.error).toMatch(/it was stopped$/);
    const post = await api("POST", `/v1/channels/${channel}/messages`, { content: "hello from a person" }, { key });
    expect(post.status, post.text).toBe(200);
  }, 60_000);

  it("is not recorded as stopped when the conversation answers that the turn was not stopped", async () => {
    const { runId, run } = await paused("stopanswers");
    const error = await runAutomation(
      withStop(async (_ref, turnId) => ({ turnId, stopped: false })),
      runId,
      1,
    );
    expect(error).toMatch(/stopping it failed/);
    const failed = (await run())!;
    expect(failed).toMatchObject({ status: "retrying", attempts: 1, finishedAt: null });
    expect(failed.error).not.toMatch(/it was stopped/);
  }, 60_000);

  it("fails for good, not retried, when the turn no longer waits (it ended another way)", async () => {
    const { key, channel, runId, run } = await paused("stopended");
    // The turn ends before this stop reaches it (its timeout, or a stop the object forgot): the
    // stop then answers "not stopped", and nothing waits on the channel any more.
    const endedElsewhere: Stop = async (ref, turnId) => {
      const { conversationId } = ref as { conversationId: string };
      const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(conversationId));
      await stub.stopTurn(ref as { tenantId: string; conversationId: string }, turnId as string);
      return { turnId, stopped: false };
    };
    expect(await runAutomation(withStop(endedElsewhere), runId, 1)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "failed", attempts: 1 });
    expect(done.error).toMatch(/it had already ended$/);
    const post = await api("POST", `/v1/channels/${channel}/messages`, { content: "hello" }, { key });
    expect(post.status, post.text).toBe(200);
  }, 60_000);
});
