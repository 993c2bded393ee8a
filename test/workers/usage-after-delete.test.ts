// A usage row metered after its conversation's DELETE began still reaches the ledger when D1 fails
// its first insert: through the outbox the purge flushes while the storage is kept (the purge then
// stops and the alarm finishes it), straight to D1 with retries once the outbox is read or gone.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, inConversation, newTenantWithId, send } from "./helpers";
import { stubOf } from "./fold-scripted";
import { holdMessageWrite, swapBinding } from "./object-bindings";

/** The object's D1 refuses its first statement that `matches` (prepare throws), then works. */
const failOnce = (id: string, matches: RegExp) =>
  swapBinding(id, "DB", (db: D1Database) => {
    let failed = false;
    return new Proxy(db, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop === "prepare")
          return (sql: string) => {
            if (!failed && matches.test(sql)) {
              failed = true;
              throw new Error("injected: D1 insert failed");
            }
            return target.prepare(sql);
          };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  });
const USAGE_INSERT = /insert into "usage_events"/i;

const usageOf = async (key: string) => (await api("GET", "/v1/usage", undefined, { key })).json.total;
const spent = { input_tokens: 120, output_tokens: 34, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

describe("usage metered after the conversation's delete, with D1's first usage insert failing", () => {
  it("keeps the calls of a turn the delete cut short", async () => {
    const { key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    await send(id, "first turn", key);
    await eventually(async () => (await usageOf(key)).turns === 1);
    await failOnce(id, USAGE_INSERT);
    const { atPut, release } = await holdMessageWrite(
      id,
      (body) => typeof body === "string" && body.includes('"tool_use"'),
    );
    const turn = send(id, '@tool memory_search {"query":"x"}\nthen an answer', key);
    await atPut;
    const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
    await new Promise((r) => setTimeout(r, 200));
    release();
    const deleted = await deleting;
    const answer = await turn;
    expect(answer.status).toBe(404);
    expect(answer.json.error?.type).toBe("not_found");
    // Wherever the row went (the outbox the purge flushes, or D1 directly), the first failure is retried.
    if (deleted.status !== 204) await runDurableObjectAlarm(stubOf(id));
    const total = await eventually(async () => ((await usageOf(key)).turns === 2 ? usageOf(key) : null), 5_000);
    expect(total).toMatchObject({ turns: 2 });
    // The cut-short turn's answer says what its calls spent (its first model call), as its row does.
    expect(answer.json.usage?.output_tokens).toBeGreaterThan(0);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
  });

  it("keeps a row metered once the purge is over: written to D1 directly, its failure retried", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    await failOnce(id, USAGE_INSERT);
    await inConversation(id, (instance) =>
      instance.outbox.meter("late_title_part", {
        tenantId,
        conversationId: id,
        model: "claude-sonnet-5-5",
        usage: spent,
      }),
    );
    await runDurableObjectAlarm(stubOf(id));
    const total = await eventually(async () => ((await usageOf(key)).turns === 1 ? usageOf(key) : null), 5_000);
    expect(total).toMatchObject({ turns: 1, input_tokens: 120, output_tokens: 34 });
  });

  it("keeps a row metered while a purge that stopped short holds the tombstone: the resumed purge writes it", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    // A first turn, indexed: the tenant has its cortex shard (the swapped bindings hide the shard list).
    await send(id, "first turn", key);
    await eventually(async () => (await usageOf(key)).turns === 1);
    // The purge's first D1 statement fails: the DELETE stops short, the tombstone and storage stay.
    await failOnce(id, /./);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(500);
    await failOnce(id, USAGE_INSERT);
    await inConversation(id, (instance) =>
      instance.outbox.meter("late_turn_part", {
        tenantId,
        conversationId: id,
        model: "claude-sonnet-5-5",
        usage: spent,
      }),
    );
    // The purge resumes by alarm (again if the injected failure stops it once more) and writes the row.
    for (let i = 0; i < 3 && (await usageOf(key)).turns !== 2; i++)
      await runDurableObjectAlarm(stubOf(id)).catch((err) => console.log("purge stopped again", String(err)));
    const total = await eventually(async () => ((await usageOf(key)).turns === 2 ? usageOf(key) : null), 5_000);
    expect(total.turns).toBe(2);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
    // The purge finished: the object holds nothing.
    expect(await inConversation(id, (instance) => instance.store.outbox().length)).toBe(0);
  });
});
