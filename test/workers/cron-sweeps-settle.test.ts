// The cron tick runs its sweeps side by side: one that fails must not end the tick while the
// others still run (unawaited, the platform may cut them off mid-write). Every sweep settles
// before the tick fails with the first failure. D1 and R2 here are fakes that only fail, so the
// tick touches no shared state (a normal workers file, not an isolated one).
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runScheduled } from "../../workers/chat/scheduled";

/** Fake D1 and R2 bindings: every D1 statement fails after `delayMs`, every R2 call at once. */
function failingBindings(delayMs: number) {
  const state = { inFlight: 0, started: 0 };
  const slow = () => {
    state.inFlight++;
    state.started++;
    return new Promise<never>((_, reject) =>
      setTimeout(() => {
        state.inFlight--;
        reject(new Error("D1 is unavailable"));
      }, delayMs),
    );
  };
  const statement: Record<string, unknown> = { all: slow, run: slow, first: slow, raw: slow };
  statement.bind = () => statement;
  const session = { prepare: () => statement, batch: slow, getBookmark: () => null };
  const db = { prepare: () => statement, batch: slow, exec: slow, withSession: () => session };
  const refused = () => Promise.reject(new Error("R2 is unavailable"));
  const bucket = { list: refused, get: refused, head: refused, put: refused, delete: refused };
  return {
    state,
    env: { ...env, DB: db as unknown as D1Database, BUCKET: bucket as unknown as R2Bucket } as Env,
  };
}

afterEach(() => vi.restoreAllMocks());

describe("a cron tick whose sweeps fail", () => {
  it("fails only once every sweep has settled, with its first sweep's failure, the others logged", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const { state, env: failing } = failingBindings(50);
    const tick = runScheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), failing);
    // The tick's first sweep's failure (the tickets', on D1), though the R2 sweeps failed sooner.
    await expect(tick).rejects.toThrow("D1 is unavailable");
    // The R2 sweeps failed at once, while the D1 ones were still at work: all had ended before the tick did.
    expect(state.started).toBeGreaterThan(0);
    expect(state.inFlight).toBe(0);
    expect(logged.mock.calls.some(([message]) => String(message).startsWith("cron tick: a further sweep failed"))).toBe(
      true,
    );
  });
});
