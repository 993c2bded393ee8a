// A variable that does not parse (core/env-config.ts) fails every request of the chat worker with a
// 500 naming it, /health included, and the worker's cron and queue entries with the same error.
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../workers/chat/index";
import summarizer from "../../workers/summarizer/index";
import { DEV_KEY } from "./helpers";
import type { ResponseOf } from "../route-types";

async function call<P extends string>(vars: Record<string, string>, path: P) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`http://chat.test${path}`, { headers: { authorization: `Bearer ${DEV_KEY}` } }),
    { ...env, ...vars } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as ResponseOf<"GET", P> };
}

describe("a bad variable", () => {
  it("is a 500 config_invalid naming it on every request, /health included; fixed, the same request succeeds", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const path of ["/health", "/v1/conversations"]) {
        const res = await call({ RATE_LIMIT_PER_MINUTE: "ten" }, path);
        expect(res.status).toBe(500);
        expect(res.json).toEqual({
          error: {
            type: "config_invalid",
            message: `invalid configuration: RATE_LIMIT_PER_MINUTE must be a whole number >= 0, got "ten"`,
          },
        });
      }
      expect(log).toHaveBeenCalledWith(expect.stringContaining("RATE_LIMIT_PER_MINUTE must be a whole number >= 0"));
    } finally {
      log.mockRestore();
    }
    expect((await call({ RATE_LIMIT_PER_MINUTE: "0" }, "/v1/conversations")).status).toBe(200);
  });

  it("fails the cron tick and queue batches of both workers with the same message", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const bad = { ...env, AUTOMATION_CLAIM_PAGE: "all" } as Env;
      const ctx = createExecutionContext();
      await expect(
        worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), bad, ctx),
      ).rejects.toThrow(/AUTOMATION_CLAIM_PAGE must be a whole number >= 1, got "all"/);
      await waitOnExecutionContext(ctx);
      await expect(worker.queue(createMessageBatch("context-chat-automations", []), bad)).rejects.toThrow(
        /AUTOMATION_CLAIM_PAGE/,
      );
      await expect(
        summarizer.queue(createMessageBatch("context-chat-jobs", []), {
          ...env,
          DEFAULT_MODEL: "no such model!",
        } as unknown as Env),
      ).rejects.toThrow(/DEFAULT_MODEL must be a model id/);
    } finally {
      log.mockRestore();
    }
  });
});
