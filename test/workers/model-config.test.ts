// A worker deployed without ANTHROPIC_API_KEY (no local dev, no MODEL_PROVIDER): every turn path
// answers 503 model_not_configured before anything is saved, and the summarizer's fold jobs fail
// (to be retried, then dead-lettered) without ever committing a summary no model wrote.
import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../workers/chat/index";
import { runFoldJob, FOLD_FALLBACK_ATTEMPT } from "../../workers/summarizer/fold";
import { consumeBatch, handleJob } from "../../workers/summarizer/index";
import { jsonOrUndefined } from "../json-body";
import { api, connectSocket, createConversation, newTenant, send, transcript } from "./helpers";
import type { Method, ResponseOf } from "../route-types";

/** The chat worker's bindings as a deployment without the key would have them. */
const unconfigured = {
  ...(env as Env),
  DEV_BOOTSTRAP: undefined,
  MODEL_PROVIDER: undefined,
  ANTHROPIC_API_KEY: undefined,
} as Env;

/** A request through the chat worker's real handler, under the unconfigured env. */
async function unconfiguredApi<M extends Method, P extends string>(
  method: M,
  path: P,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const req = new Request(`http://chat.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const res = await worker.fetch(req as never, unconfigured, createExecutionContext());
  const text = await res.text();
  return { status: res.status, json: jsonOrUndefined(text) as ResponseOf<M, P>, headers: res.headers };
}

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

/** Runs `fn` while the conversation's object sees the unconfigured env (its own bindings otherwise). */
async function withUnconfiguredObject<T>(id: string, fn: () => Promise<T>): Promise<T> {
  // The object's env is protected; the test swaps it on the live instance and puts it back after.
  await runInDurableObject(stubOf(id), async (instance) => {
    const o = instance as unknown as { env: Env; ownEnv: Env };
    o.ownEnv = o.env;
    o.env = { ...o.env, DEV_BOOTSTRAP: undefined, MODEL_PROVIDER: undefined, ANTHROPIC_API_KEY: undefined };
  });
  try {
    return await fn();
  } finally {
    await runInDurableObject(stubOf(id), async (instance) => {
      const o = instance as unknown as { env: Env; ownEnv: Env };
      o.env = o.ownEnv;
    });
  }
}

const expectNotConfigured = (error: { type: string; message: string } | undefined) => {
  expect(error?.type).toBe("model_not_configured");
  expect(error?.message).toMatch(/ANTHROPIC_API_KEY/);
};

describe("no model configured outside local dev", () => {
  it("a JSON turn answers 503 naming ANTHROPIC_API_KEY and saves nothing", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await unconfiguredApi("POST", `/v1/conversations/${id}/messages`, key, { content: "hello there" });
    expect(r.status).toBe(503);
    expectNotConfigured(r.json.error);
    expect(await transcript(id, key)).toEqual([]);
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.messageCount).toBe(0);
  });

  it("an SSE turn gets the same 503 JSON before any stream starts", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await unconfiguredApi(
      "POST",
      `/v1/conversations/${id}/messages`,
      key,
      { content: "stream me" },
      { accept: "text/event-stream" },
    );
    expect(r.status).toBe(503);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expectNotConfigured(r.json.error);
    expect(await transcript(id, key)).toEqual([]);
  });

  it("a channel message answers 503 without creating the channel or its conversation", async () => {
    const key = await newTenant();
    const r = await unconfiguredApi("POST", "/v1/channels/ops/messages", key, { content: "deploy status?" });
    expect(r.status).toBe(503);
    expectNotConfigured(r.json.error);
    expect((await api("GET", "/v1/channels", undefined, { key })).json.data).toEqual([]);
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });

  it("the turn routes still validate first, and a configured env still answers", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await unconfiguredApi("POST", `/v1/conversations/${id}/messages`, key, { nope: 1 })).status).toBe(400);
    expect((await unconfiguredApi("POST", `/v1/conversations/${id}/messages`, key, { content: "hi" }, {})).status).toBe(
      503,
    );
    expect((await send(id, "now with a model", key)).status).toBe(200);
  });

  it("a websocket send frame gets a model_not_configured error frame (status 503) and saves nothing", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    expect(c.status).toBe(101);
    await withUnconfiguredObject(id, async () => {
      c.ws!.send(JSON.stringify({ type: "send", content: "over the socket" }));
      const e = await c.next((x) => x.type === "error");
      expectNotConfigured(e.error);
      expect(e.error.status).toBe(503);
    });
    expect(c.events.some((e) => e.type === "turn_start")).toBe(false);
    expect(await transcript(id, key)).toEqual([]);
    c.ws!.send(JSON.stringify({ type: "send", content: "after the key is back" }));
    await c.next((e) => e.type === "turn_end");
    expect((await transcript(id, key)).map((m) => m.role)).toEqual(["user", "assistant"]);
    c.ws!.close();
  });

  it("a revoked key's socket is closed on a send frame even when no model is configured", async () => {
    const key = await newTenant();
    const other = (await api("POST", "/v1/keys", { name: "other" }, { key })).json;
    const id = await createConversation(undefined, key);
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${other.apiKey}` });
    const closed = new Promise<number>((resolve) => c.ws!.addEventListener("close", (e) => resolve(e.code)));
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key })).status).toBe(200);
    await withUnconfiguredObject(id, async () => {
      c.ws!.send(JSON.stringify({ type: "send", content: "from a revoked key" }));
      expect((await c.next((x) => x.type === "error")).error.type).toBe("authentication_error");
      expect(await closed).toBe(1008);
    });
  });

  it("a turn reaching the object by RPC (automations) ends with the error before its prompt is saved", async () => {
    const id = await createConversation();
    const events = await withUnconfiguredObject(id, async () => {
      const answer = await stubOf(id).send(
        { tenantId: "dev", conversationId: id },
        { content: [{ type: "text", text: "scheduled digest" }] },
      );
      if (answer.kind !== "stream") throw new Error(`expected a stream, got ${answer.kind}`);
      return (await new Response(answer.ndjson).text())
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
    });
    expect(events.map((e) => e.type)).toEqual(["turn_start", "error", "turn_end"]);
    expectNotConfigured(events[1].error);
    expect(events[1].error.status).toBe(503);
    expect(await transcript(id)).toEqual([]);
  });
});

describe("the summarizer without a model", () => {
  async function leasedFold(): Promise<{
    id: string;
    job: { kind: "fold"; jobId: string; tenantId: string; conversationId: string; requestedAt: string };
  }> {
    const id = await createConversation({ foldThresholdChars: 1_000, tailMessages: 2 });
    for (let i = 0; i < 20; i++) {
      await send(id, `turn ${i} about topic-${i}\n@reply-chars 600`);
      const lease = await runInDurableObject(
        stubOf(id),
        async (_i, state) =>
          state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0],
      );
      if (lease)
        return {
          id,
          job: {
            kind: "fold",
            jobId: JSON.parse(lease.value).jobId,
            tenantId: "dev",
            conversationId: id,
            requestedAt: new Date().toISOString(),
          },
        };
    }
    throw new Error("no fold dispatched");
  }

  it("refuses the fold, even on the delivery that would commit a fallback, and the queue retries it", async () => {
    const { id, job } = await leasedFold();
    await expect(runFoldJob(job, unconfigured, { attempts: FOLD_FALLBACK_ATTEMPT + 1 })).rejects.toMatchObject({
      type: "model_not_configured",
    });
    const batch = createMessageBatch<unknown>("context-chat-jobs", [
      { id: "d0", timestamp: new Date(), attempts: FOLD_FALLBACK_ATTEMPT + 1, body: job },
    ]);
    const ctx = createExecutionContext();
    await consumeBatch(batch, (j, attempts) => handleJob(j, unconfigured, attempts));
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["d0"]);
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(meta).toMatchObject({ summary: null, summarizedThroughMessage: null, foldCount: 0 });
    // With the model back, the same job folds.
    expect((await runFoldJob(job, env as Env)).applied).toBe(true);
  });
});
