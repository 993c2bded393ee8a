// The cron's corpus roll-up does bounded work per day and per tick: a day too big for one
// invocation (its subrequests, its memory) is rolled over several ticks, and neither it nor any
// day that fails holds back the other tenants' days behind it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { corpusEventPrefix, corpusLogKey } from "../../r2-layout";
import { logCorpusEvent, readCorpusDay, rollUpCorpusDays } from "../../services/corpus";
import { ADMIN, api } from "./helpers";
import { limitedBucket } from "./limited-bucket";

async function tenant(): Promise<string> {
  const r = await api("POST", "/v1/admin/tenants", { name: `corpus-${crypto.randomUUID()}` }, { key: ADMIN });
  return r.json.tenant.id;
}

/** env.BUCKET, where `fails` says which calls throw. */
function failingBucket(fails: (method: string, args: unknown[]) => boolean): R2Bucket {
  return new Proxy(env.BUCKET, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (fails(String(prop), args)) throw new Error(`${String(prop)} failed`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** `n` events of one day, a second apart, in the order they happened. */
async function logDay(tenantId: string, { day, n }: { day: string; n: number }): Promise<void> {
  const start = Date.parse(`${day}T00:00:00Z`);
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, j) =>
        logCorpusEvent(env, {
          tenantId,
          event: "fold.applied",
          fields: { n: i + j },
          at: new Date(start + (i + j) * 1000),
        }),
      ),
    );
  }
}

const loggedNumbers = (log: string) => [...log.matchAll(/^- n: (\d+)$/gm)].map((m) => Number(m[1]));
const pending = async (tenantId: string) =>
  (await env.DB.prepare(`SELECT day FROM corpus_days WHERE tenant_id = ?`).bind(tenantId).all()).results.length;

describe("the corpus roll-up", () => {
  it("rolls up another tenant's day behind an older day too big for one invocation", async () => {
    const [a, b] = [await tenant(), await tenant()];
    await logDay(a, { day: "2025-01-01", n: 300 });
    await logDay(b, { day: "2025-01-02", n: 1 });
    for (let tick = 0; tick < 3; tick++) {
      await rollUpCorpusDays({ DB: env.DB, BUCKET: limitedBucket(200) }, Date.now()).catch(() => {});
    }
    const log = await env.BUCKET.get(corpusLogKey(b, "2025-01-02"));
    expect(log).not.toBeNull();
    expect(loggedNumbers(await log!.text())).toEqual([0]);
    expect(await pending(b)).toBe(0);
  });

  it("finishes a big day over several ticks, every event once and in order, readable meanwhile", async () => {
    const t = await tenant();
    const day = "2025-01-03";
    const n = 450;
    await logDay(t, { day, n });
    const whole = await readCorpusDay(env.BUCKET, t, day);
    expect(loggedNumbers(whole!)).toEqual(Array.from({ length: n }, (_, i) => i));
    let ticks = 0;
    while ((await pending(t)) > 0 && ticks < 20) {
      // Fewer calls than the day has events: read whole, it could never be rolled up.
      await rollUpCorpusDays({ DB: env.DB, BUCKET: limitedBucket(300) }, Date.now());
      ticks += 1;
      // Part rolled or whole, the day reads the same.
      expect(await readCorpusDay(env.BUCKET, t, day)).toBe(whole);
    }
    expect(ticks).toBeGreaterThan(1);
    expect(await pending(t)).toBe(0);
    expect((await env.BUCKET.list({ prefix: corpusEventPrefix(t, day) })).objects).toEqual([]);
    const log = await (await env.BUCKET.get(corpusLogKey(t, day)))!.text();
    expect(log).toBe(whole);
    expect(loggedNumbers(log)).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it("rolls up the days after one that fails on every tick", async () => {
    const [a, b] = [await tenant(), await tenant()];
    await logDay(a, { day: "2024-12-01", n: 2 });
    await logDay(b, { day: "2024-12-02", n: 1 });
    const broken = failingBucket((_m, args) => JSON.stringify(args).includes(`tenants/${a}/`));
    await rollUpCorpusDays({ DB: env.DB, BUCKET: broken }, Date.now());
    expect(await pending(a)).toBe(1);
    expect(await pending(b)).toBe(0);
    expect(loggedNumbers((await readCorpusDay(env.BUCKET, b, "2024-12-02"))!)).toEqual([0]);
  });

  it("a tick that dies after writing the log and before deleting the events adds none of them twice", async () => {
    const t = await tenant();
    const day = "2024-12-03";
    await logDay(t, { day, n: 250 });
    const whole = await readCorpusDay(env.BUCKET, t, day);
    let ticks = 0;
    while ((await pending(t)) > 0 && ticks < 20) {
      // Every other tick dies at its delete.
      const dies = ticks % 2 === 0;
      await rollUpCorpusDays({ DB: env.DB, BUCKET: failingBucket((m) => dies && m === "delete") }, Date.now());
      ticks += 1;
      expect(await readCorpusDay(env.BUCKET, t, day)).toBe(whole);
    }
    expect(await pending(t)).toBe(0);
    expect(loggedNumbers(await (await env.BUCKET.get(corpusLogKey(t, day)))!.text())).toEqual(
      Array.from({ length: 250 }, (_, i) => i),
    );
  });
});
