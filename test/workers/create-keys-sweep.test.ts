// Conversation create keys past their 24 hours go with the cron tick (every 5 minutes), for every tenant: a
// tenant that stops sending keyed creates never removes its own (its next keyed create would).
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS } from "../../core/idempotency-key";
import { conversationCreateKeys } from "../../db/schema";
import { runScheduled } from "../../workers/chat/scheduled";

const HOUR = 60 * 60_000;

describe("the cron tick's sweep of conversation create keys", () => {
  it("removes every tenant's keys older than 24 hours and keeps the younger ones", async () => {
    const at = Date.parse("2026-06-01T12:00:00.000Z");
    const row = (tenantId: string, key: string, ageMs: number) => ({
      tenantId,
      key,
      fingerprint: "f",
      conversationId: `conv_${key}`,
      createdAt: new Date(at - ageMs).toISOString(),
    });
    const d = drizzle(env.DB);
    await d
      .insert(conversationCreateKeys)
      .values([
        row("t-ck-quiet", "old-1", IDEMPOTENCY_TTL_MS + HOUR),
        row("t-ck-quiet", "old-2", 30 * 24 * HOUR),
        row("t-ck-busy", "old-3", IDEMPOTENCY_TTL_MS + 1),
        row("t-ck-busy", "young-1", IDEMPOTENCY_TTL_MS - HOUR),
        row("t-ck-quiet", "young-2", HOUR),
      ]);

    const swept = await runScheduled(createScheduledController({ scheduledTime: at, cron: "0 * * * *" }), env as Env);

    expect(swept.createKeysSwept).toBe(3);
    const left = await d.select({ key: conversationCreateKeys.key }).from(conversationCreateKeys);
    expect(left.map((r) => r.key).sort()).toEqual(["young-1", "young-2"]);
  });
});
