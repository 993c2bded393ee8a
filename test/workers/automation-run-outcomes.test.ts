// What an automation run records when its turn does not end well without an error: a turn paused
// on client tools is stopped even when the automation was deleted mid-run (its channel stays
// free), and a turn the user stopped or the model refused is a failed run naming its stop reason.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runAutomation } from "../../workers/chat/automation-runner";
import { claimedRun, createClientTool } from "./automation-helpers";
import { api, eventually, newTenant, transcript } from "./helpers";

/** An automation on its own channel with one claimed run, as the cron trigger leaves it. */
const claimed = (prompt: string, key: string) => claimedRun(key, { prompt, label: "runoutcomes", year: 2035 });

/** The channel's conversation once the run's prompt is in it (generous: a loaded machine is slow to start a turn). */
const channelConversation = (key: string, channel: string) =>
  eventually(async () => {
    const channels = (await api("GET", "/v1/channels", undefined, { key })).json.data as {
      name: string;
      conversationId?: string;
    }[];
    const id = channels.find((c) => c.name === channel)?.conversationId;
    return id && (await transcript(id, key)).length > 0 ? id : null;
  }, 30_000);

describe("an automation deleted while its run's turn calls a client tool", () => {
  it("still has the paused turn stopped, so the channel's conversation takes a person's post", async () => {
    const key = await newTenant();
    const name = "pick_colour";
    await createClientTool(key, name);
    const { automationId, channel, runId } = await claimed(
      `@reply-chars 600\n@stream-pace 200\n@tool tool_activate {"name":"${name}"}\n@tool ${name} {}`,
      key,
    );
    const attempt = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key, channel);
    // Deleted mid-run: the turn still streams its first reply, before it calls the tool.
    const before = (await api("GET", `/v1/conversations/${conversationId}`, undefined, { key })).json;
    expect(before.requiresAction ?? null).toBeNull();
    expect((await api("DELETE", `/v1/automations/${automationId}`, undefined, { key })).status).toBe(204);
    expect(await attempt).toBeNull();
    const conversation = await eventually(async () => {
      const c = (await api("GET", `/v1/conversations/${conversationId}`, undefined, { key })).json;
      return c.requiresAction ? null : c;
    });
    expect(conversation.requiresAction ?? null).toBeNull();
    const post = await api("POST", `/v1/channels/${channel}/messages`, { content: "hello from a person" }, { key });
    expect(post.status, post.text).toBe(200);
    // The deleted automation took its runs with it: the stale attempt recorded none.
    const rows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM automation_runs WHERE id = ?`)
      .bind(runId)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  }, 60_000);
});

describe("a run whose turn ended without an error but without an answer", () => {
  it("is failed, naming the stop, when the user stopped the turn", async () => {
    const key = await newTenant();
    const { channel, runId, run } = await claimed("digest\n@hold-stream after=50", key);
    const attempt = runAutomation(env as Env, runId, 1);
    const conversationId = await channelConversation(key, channel);
    await eventually(async () => {
      const stop = await api("POST", `/v1/conversations/${conversationId}/stop`, {}, { key });
      return stop.json?.stopped === true ? true : null;
    });
    expect(await attempt).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "failed", attempts: 1, stopReason: "interrupted", conversationId });
    expect(done.error).toMatch(/stop_reason "interrupted"/);
  }, 60_000);

  it("is failed, naming the stop, when the model refused", async () => {
    const key = await newTenant();
    const { runId, run } = await claimed("digest\n@stop refusal cyber", key);
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "failed", attempts: 1, stopReason: "refusal" });
    expect(done.error).toMatch(/stop_reason "refusal"/);
  });

  it("is failed, naming the stop, when the turn reached its maxToolIterations bound unanswered", async () => {
    const key = await newTenant();
    const { channel, runId, run } = await claimed('@tool memory_search {"query":"weekly report"}', key);
    // The channel's conversation, made before the run, allows one model call's tools.
    const first = await api("POST", `/v1/channels/${channel}/messages`, { content: "hello" }, { key });
    expect(first.status, first.text).toBe(200);
    const patch = { settings: { maxToolIterations: 1 } };
    expect((await api("PATCH", `/v1/conversations/${first.json.conversationId}`, patch, { key })).status).toBe(200);
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    const done = (await run())!;
    expect(done).toMatchObject({ status: "failed", attempts: 1, stopReason: "max_iterations" });
    expect(done.error).toMatch(/stop_reason "max_iterations"/);
  });

  it("records the stop reason of a turn that answered", async () => {
    const key = await newTenant();
    const { runId, run } = await claimed("digest\n@reply-chars 100", key);
    expect(await runAutomation(env as Env, runId, 1)).toBeNull();
    expect(await run()).toMatchObject({ status: "succeeded", stopReason: "end_turn", error: null });
  });
});
