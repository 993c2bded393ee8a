// A turn that fails on the model answers 502 with `error: {type, message, status, providerType,
// requestId}` (docs/api-notes.md, "Turns"): the JSON answer names the provider's error type and
// request id as the SSE `error` event does, and an idempotent retry answers them again.
import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createConversation, sendSse } from "./helpers";

const FAIL = "please fail\n@model-error 500";
const keyed = (id: string, key: string) =>
  api("POST", `/v1/conversations/${id}/messages`, { content: FAIL }, { headers: { "idempotency-key": key } });

describe("a model failure's JSON answer", () => {
  it("carries the provider's error type and request id, as the SSE error event does", async () => {
    const id = await createConversation();
    const r = await api("POST", `/v1/conversations/${id}/messages`, { content: FAIL });
    expect(r.status, r.text).toBe(502);
    expect(r.json.error).toMatchObject({
      type: "model_error",
      status: 500,
      providerType: "api_error",
      requestId: expect.stringMatching(/^req_\w+$/),
    });
    const streamed = (await sendSse(await createConversation(), FAIL)).find((e) => e.type === "error");
    expect(streamed?.type === "error" && streamed.error).toMatchObject({
      type: "model_error",
      status: 500,
      providerType: "api_error",
      requestId: expect.stringMatching(/^req_\w+$/),
    });
  });

  it("is answered again with both by an idempotent retry, across an eviction", async () => {
    const id = await createConversation();
    const key = `turn-${crypto.randomUUID()}`;
    const first = await keyed(id, key);
    expect(first.status, first.text).toBe(502);
    expect(first.json.error).toMatchObject({ providerType: "api_error", requestId: expect.stringMatching(/^req_/) });
    await evictDurableObject(env.CONVERSATION.get(env.CONVERSATION.idFromName(id)));
    const retry = await keyed(id, key);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.status).toBe(502);
    expect(retry.json.error).toEqual(first.json.error);
  });
});
