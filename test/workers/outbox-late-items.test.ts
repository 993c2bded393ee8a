// An outbox item put while a run of the index outbox is under way, after that run read the outbox
// (while it records a fold's episode, or writes the listing row), still reaches D1 with no new
// activity on the conversation: the run that missed it sets the alarm soon, even when it was the
// alarm's own run, whose alarm has fired; so do the vectors an alarm's run leaves to embed after a
// full batch. A caller that asked for a run after putting its row (the automatic title) finds the
// row written when that run resolves.
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { upsertDocs } from "../../services/cortex/search-index";
import { CATCH_UP_MAX_DOCS } from "../../services/semantic/catch-up";
import { note } from "../cortex-docs";
import { fakeAi, fakeVectorize } from "./fake-vector-bindings";
import { api, createConversation, eventually, inConversation, newTenantWithId, send } from "./helpers";
import { stubOf } from "./fold-scripted";
import { swapBinding } from "./object-bindings";

/**
 * The object's D1 holds the statements whose SQL `matches` (at their execution), or its batches
 * (the listing row's write), until `release`; `reached` resolves when the first one waits.
 */
async function holdD1(id: string, matches: RegExp | "batch") {
  let arrived!: () => void;
  const reached = new Promise<void>((r) => (arrived = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = (stmt: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => held(target.bind(...args));
        if (prop === "first" || prop === "all" || prop === "raw" || prop === "run")
          return async (...args: unknown[]) => {
            arrived();
            await gate;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        return value.bind(target);
      },
    });
  await swapBinding(
    id,
    "DB",
    (db) =>
      new Proxy(db, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop === "prepare" && matches !== "batch")
            return (sql: string) => (matches.test(sql) ? held(target.prepare(sql)) : target.prepare(sql));
          if (prop === "batch" && matches === "batch")
            return async (statements: D1PreparedStatement[]) => {
              arrived();
              await gate;
              return target.batch(statements);
            };
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
  );
  return { reached, release };
}

const EPISODE_READ = /from "memory_episodes"/i;
const usageOf = async (key: string) => (await api("GET", "/v1/usage", undefined, { key })).json.total;
const spent = { input_tokens: 120, output_tokens: 34, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

/** A conversation with one turn, metered and caught up, and a fold's episode waiting in its outbox. */
async function conversationWithEpisode() {
  const { tenantId, key } = await newTenantWithId();
  const id = await createConversation(undefined, key);
  await send(id, "first turn", key);
  await eventually(async () => (await usageOf(key)).turns === 1);
  await inConversation(id, async (instance, state) => {
    await instance.outbox.pending();
    instance.store.putOutbox("episode:fold_late_items", {
      tenantId,
      conversationId: id,
      foldJobId: `fold_late_${id}`,
      throughSeq: 1,
      summary: "The user said hello.",
      at: new Date().toISOString(),
    });
    // The reminder an append leaves: the alarm's run is the one that meets the late row.
    await state.storage.setAlarm(Date.now() + 60_000);
  });
  return { tenantId, key, id };
}

/** Runs the object's alarm while one is set (a few times at most), as the platform would, with no other activity. */
async function runAlarmsLeft(id: string): Promise<number> {
  let runs = 0;
  while (runs < 5 && (await runDurableObjectAlarm(stubOf(id)))) runs++;
  return runs;
}

describe("outbox items put after a run read the outbox", () => {
  it("a usage row metered while the alarm's run records an episode reaches the ledger without new activity", async () => {
    const { tenantId, key, id } = await conversationWithEpisode();
    const { reached, release } = await holdD1(id, EPISODE_READ);
    const alarm = runDurableObjectAlarm(stubOf(id));
    await reached;
    await inConversation(id, (instance) =>
      instance.outbox.meter("late_part_alarm", {
        tenantId,
        conversationId: id,
        model: "claude-sonnet-5-5",
        usage: spent,
      }),
    );
    release();
    expect(await alarm).toBe(true);
    await runAlarmsLeft(id);
    const total = await eventually(async () => ((await usageOf(key)).turns === 2 ? usageOf(key) : null), 3_000);
    expect(total.turns).toBe(2);
    expect(await inConversation(id, (instance) => instance.store.outbox().length)).toBe(0);
  });

  it("a usage row metered while the alarm's run writes the listing row reaches the ledger without new activity", async () => {
    const { tenantId, key, id } = await conversationWithEpisode();
    const { reached, release } = await holdD1(id, "batch");
    const alarm = runDurableObjectAlarm(stubOf(id));
    await reached;
    await inConversation(id, (instance) =>
      instance.outbox.meter("late_part_row", {
        tenantId,
        conversationId: id,
        model: "claude-sonnet-5-5",
        usage: spent,
      }),
    );
    release();
    expect(await alarm).toBe(true);
    // The run that missed it left the alarm, soon: no turn, no delete, nothing else comes.
    expect(await inConversation(id, (_i, state) => state.storage.getAlarm())).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(await runAlarmsLeft(id)).toBeGreaterThan(0);
    const total = await eventually(async () => ((await usageOf(key)).turns === 2 ? usageOf(key) : null), 3_000);
    expect(total.turns).toBe(2);
    expect(await inConversation(id, (instance) => instance.store.outbox().length)).toBe(0);
    // Caught up again: that run cleared the alarm it was given.
    expect(await inConversation(id, (_i, state) => state.storage.getAlarm())).toBeNull();
  });

  it("a run asked for after the row was put, during a run recording an episode, resolves with the row written", async () => {
    const { tenantId, key, id } = await conversationWithEpisode();
    const { reached, release } = await holdD1(id, EPISODE_READ);
    const alarm = runDurableObjectAlarm(stubOf(id));
    await reached;
    // As the automatic title does: its row, then the run that writes it, awaited.
    let asked!: Promise<void>;
    await inConversation(id, (instance) => {
      instance.outbox.meter(
        "late_title_part",
        { tenantId, conversationId: id, model: "claude-sonnet-5-5", usage: spent },
        "title",
      );
      asked = instance.outbox.pending();
    });
    release();
    await asked;
    expect(await usageOf(key)).toMatchObject({ turns: 1, titles: 1 });
    expect(await alarm).toBe(true);
  });
});

describe("vectors left to embed at the end of the alarm's run", () => {
  it("are embedded by the runs that follow, with no new activity", async () => {
    const { tenantId, key, id } = await conversationWithEpisode();
    const vectorize = fakeVectorize();
    await inConversation(id, (instance) => {
      instance.env = { ...instance.env, AI: fakeAi().binding, VECTORIZE: vectorize.binding };
    });
    // More documents without a vector than one catch-up embeds: the alarm's run leaves some.
    const db = shardDatabase(env, (await routeOf(env as Env, tenantId)).shard);
    await upsertDocs(
      db,
      Array.from({ length: CATCH_UP_MAX_DOCS + 1 }, (_, i) => note(tenantId, `bulk_${tenantId}_${i}`, `note ${i}`)),
    );
    const docs = async () =>
      (await db
        .prepare("SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?")
        .bind(tenantId)
        .first<number>("n"))!;
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect(vectorize.vectors.size).toBe(CATCH_UP_MAX_DOCS);
    expect(await runAlarmsLeft(id)).toBeGreaterThan(0);
    expect(vectorize.vectors.size).toBe(await docs());
    expect(await inConversation(id, (_i, state) => state.storage.getAlarm())).toBeNull();
    expect((await usageOf(key)).turns).toBe(1);
  });
});
