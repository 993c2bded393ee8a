// A failed queue job waits the queue's backoff (10 s, 20 s, 40 s … at most 10 minutes) before its
// next delivery, or longer when the model API said when to come back: a fold call makes no SDK
// retries of its own, so its 429's or 529's `retry-after` is honoured by the queue's retry.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { MAX_RETRY_DELAY_SECONDS } from "../../core/jobs";
import { consumeBatch, retryDelay } from "../../workers/summarizer/index";

const apiError = (status: number, retryAfter?: string) =>
  Anthropic.APIError.generate(
    status,
    { type: "error", error: { type: status === 429 ? "rate_limit_error" : "overloaded_error", message: "slow down" } },
    undefined,
    new Headers(retryAfter === undefined ? {} : { "retry-after": retryAfter }),
  );

describe("a failed job's next delivery", () => {
  it("waits the API's retry-after when it is longer than the backoff, at most the cap", () => {
    expect(retryDelay(apiError(429, "300"), 1)).toBe(300);
    expect(retryDelay(apiError(529, "12.5"), 1)).toBe(13);
    expect(retryDelay(apiError(429, "86400"), 1)).toBe(MAX_RETRY_DELAY_SECONDS);
  });

  it("keeps the backoff when retry-after is shorter, missing or not a number of seconds", () => {
    expect(retryDelay(apiError(429, "1"), 3)).toBe(40);
    expect(retryDelay(apiError(500), 2)).toBe(20);
    expect(retryDelay(apiError(429, "Wed, 21 Oct 2015 07:28:00 GMT"), 1)).toBe(10);
    expect(retryDelay(new Error("boom"), 1)).toBe(10);
  });

  it("is what the consumer asks the queue for", async () => {
    let asked: number | undefined;
    const message = {
      id: "m1",
      timestamp: new Date(),
      attempts: 1,
      body: { kind: "extract", tenantId: "ten_1", attachmentId: "att_1", fromPage: 1, toPage: 1 },
      ack: () => {
        throw new Error("not acked: the run failed");
      },
      retry: (o?: { delaySeconds?: number }) => {
        asked = o?.delaySeconds;
      },
    };
    const batch = { queue: "context-chat-jobs", messages: [message] } as unknown as MessageBatch<unknown>;
    await consumeBatch(batch, async () => {
      throw apiError(429, "300");
    });
    expect(asked).toBe(300);
  });
});
