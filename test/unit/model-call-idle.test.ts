// A stream that stops sending bytes: the SDK's timeout covers the request only until its headers,
// so streamCall gives up after `idleMs` of silence (pings count as bytes) and reports the cut the
// turn loop retries, with what had streamed before it.
import { beforeEach, describe, expect, it } from "vitest";
import { streamCall } from "../../agent/model-call";
import { isRetryableStreamError } from "../../agent/model-errors";
import { resetOfflineCache } from "../../core/offline-model";
import type { ModelRequest } from "../../core/types";
import { makeClient } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const request = (text: string): ModelRequest => ({
  model: "offline-200k",
  max_tokens: 4_096,
  system: [{ type: "text", text: "sys" }],
  tools: [],
  messages: [{ role: "user", content: [{ type: "text", text }] }],
});

describe("a stream gone silent", () => {
  it("is cut after the idle bound, as a retryable stream error keeping what streamed", async () => {
    const deltas: string[] = [];
    const call = await streamCall({
      client: makeClient(),
      request: request("Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200"),
      turnId: "turn_1",
      emit: (e) => e.type === "delta" && deltas.push(e.text),
      idleMs: 300,
    });
    expect(call.ok).toBe(false);
    if (call.ok) return;
    expect(isRetryableStreamError(call.error)).toBe(true);
    expect((call.error as Error).message).toMatch(/no data/);
    const partial = call.partial?.content.map((b) => (b.type === "text" ? b.text : "")).join("") ?? "";
    expect(partial.length).toBeGreaterThanOrEqual(200);
    expect(partial).toBe(deltas.join(""));
    // Without the bound the offline model holds it for HOLD_MS (5 minutes): far past this test's timeout.
  }, 20_000);

  it("a stream that keeps sending, however slowly, is never cut", async () => {
    const call = await streamCall({
      client: makeClient(),
      request: request("Tell me about lakes.\n@reply-chars 300\n@stream-pace 100"),
      turnId: "turn_1",
      emit: () => {},
      idleMs: 400,
    });
    expect(call.ok).toBe(true);
  }, 20_000);

  it("a stop during the silence is a stop, not a cut", async () => {
    const stop = new AbortController();
    const pending = streamCall({
      client: makeClient(),
      request: request("Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200"),
      turnId: "turn_1",
      emit: (e) => e.type === "delta" && stop.abort(),
      signal: stop.signal,
      idleMs: 5_000,
    });
    const call = await pending;
    expect(call.ok).toBe(false);
    if (!call.ok) expect(isRetryableStreamError(call.error)).toBe(false);
  }, 10_000);
});
