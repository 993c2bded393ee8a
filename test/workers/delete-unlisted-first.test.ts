// A conversation answers like one that never existed from the moment its delete starts, on the
// routes that read without its object too: /v1/search (the cortex shard) and the listings (D1).
// Its cortex rows and listing row go right after the tombstone, before the delete waits for the
// writes in flight (a message batch, an index write), and again in the purge after them, which
// removes what such a write put back. A delete cut short in that first step is finished by the alarm.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { conversationPrefix } from "../../r2-layout";
import { shardNames } from "../../services/cortex/routing";
import { stubOf } from "./fold-scripted";
import { api, createConversation, eventually, inConversation, newTenantWithId, r2KeysUnder, send } from "./helpers";
import { holdMessageWrite, swapBinding } from "./object-bindings";

const hitsOf = async (q: string, key: string) =>
  (
    (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json as {
      data: { conversationId: string }[];
    }
  ).data.map((h) => h.conversationId);

const listedIds = async (key: string, order: "created" | "activity") =>
  (
    (await api("GET", `/v1/conversations?order=${order}&limit=100`, undefined, { key })).json as {
      data: { id: string }[];
    }
  ).data.map((c) => c.id);

/** Neither search nor the listings name the conversation (the other one stays in both). */
async function unlisted({ id, other, key, word }: { id: string; other: string; key: string; word: string }) {
  return (
    (await hitsOf(word, key)).every((c) => c === other) &&
    !(await listedIds(key, "created")).includes(id) &&
    !(await listedIds(key, "activity")).includes(id)
  );
}

/** A tenant with two conversations, both saying `word` and found by it: `id` is the one deleted. */
async function twoConversations(word: string) {
  const { tenantId, key } = await newTenantWithId();
  const id = await createConversation(undefined, key);
  const other = await createConversation(undefined, key);
  for (const c of [id, other]) expect((await send(c, `my locker code is ${word}-7731`, key)).status).toBe(200);
  await eventually(async () => new Set(await hitsOf(word, key)).size === 2);
  return { tenantId, key, id, other, word };
}

/**
 * Holds the object's first cortex write (a batch at a shard's primary) from now until `release`;
 * `atBatch` resolves when it is held.
 */
async function holdIndexWrite(id: string) {
  let reached!: () => void;
  const atBatch = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  const holding = (session: D1DatabaseSession): D1DatabaseSession =>
    new Proxy(session, {
      get(s, prop) {
        const value: unknown = Reflect.get(s, prop);
        if (prop !== "batch" || held || typeof value !== "function")
          return typeof value === "function" ? value.bind(s) : value;
        return async (...args: Parameters<D1DatabaseSession["batch"]>) => {
          held = true;
          reached();
          await gate;
          return s.batch(...args);
        };
      },
    });
  await inConversation(id, (instance) => {
    const own = instance.env;
    const shards: PropertyDescriptorMap = {};
    for (const name of shardNames(own)) {
      const db = (own as unknown as Record<string, D1Database>)[name];
      shards[name] = {
        value: new Proxy(db, {
          get(t, prop) {
            if (prop === "withSession") return (start?: string) => holding(t.withSession(start));
            const value: unknown = Reflect.get(t, prop);
            return typeof value === "function" ? value.bind(t) : value;
          },
        }),
      };
    }
    Object.defineProperty(instance, "env", { value: Object.create(own, shards), configurable: true, writable: true });
  });
  return { atBatch, release };
}

describe("a conversation's delete, while the writes in flight are awaited", () => {
  it("leaves search and the listings at once, while a message batch write is held", async () => {
    const c = await twoConversations("quartzwindow");
    const { atPut, release } = await holdMessageWrite(c.id, () => true);
    const turn = send(c.id, "second turn", c.key);
    await atPut;
    const deleting = api("DELETE", `/v1/conversations/${c.id}`, undefined, { key: c.key });
    try {
      await eventually(() => unlisted(c), 5_000);
      expect((await api("GET", `/v1/conversations/${c.id}`, undefined, { key: c.key })).status).toBe(404);
    } finally {
      release();
    }
    expect((await deleting).status).toBe(204);
    await turn;
    expect(await unlisted(c)).toBe(true);
    expect(new Set(await hitsOf(c.word, c.key))).toEqual(new Set([c.other]));
  });

  it("leaves them while an index write is held, and what that write adds is purged after it", async () => {
    const c = await twoConversations("amberlantern");
    const { atBatch, release } = await holdIndexWrite(c.id);
    // The turn's messages reach the shard in the held write, after the first step removed the rest.
    const turn = await send(c.id, "the spare key is under tealmarble", c.key);
    expect(turn.status).toBe(200);
    await atBatch;
    const deleting = api("DELETE", `/v1/conversations/${c.id}`, undefined, { key: c.key });
    try {
      await eventually(() => unlisted(c), 5_000);
    } finally {
      release();
    }
    expect((await deleting).status).toBe(204);
    expect(await unlisted(c)).toBe(true);
    expect(await hitsOf("tealmarble", c.key)).toEqual([]);
    expect(new Set(await hitsOf(c.word, c.key))).toEqual(new Set([c.other]));
  });
});

describe("a conversation's delete cut short in its first step", () => {
  it("is finished by the alarm: no listing row, cortex row, record or tombstone is left", async () => {
    const c = await twoConversations("cobaltheron");
    // The object's first D1 batch (the listing row's) fails once; later ones work.
    let failures = 1;
    await swapBinding(
      c.id,
      "DB",
      (db: D1Database) =>
        new Proxy(db, {
          get(target, prop) {
            const value: unknown = Reflect.get(target, prop);
            if (prop === "batch" && failures > 0)
              return async () => {
                failures--;
                throw new Error("injected: D1 batch failed");
              };
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    expect((await api("DELETE", `/v1/conversations/${c.id}`, undefined, { key: c.key })).status).toBe(500);
    expect(failures).toBe(0);
    expect((await api("GET", `/v1/conversations/${c.id}`, undefined, { key: c.key })).status).toBe(404);
    expect(await runDurableObjectAlarm(stubOf(c.id))).toBe(true);
    expect(await unlisted(c)).toBe(true);
    expect(new Set(await hitsOf(c.word, c.key))).toEqual(new Set([c.other]));
    expect(await r2KeysUnder(conversationPrefix(c.tenantId, c.id))).toEqual([]);
    expect((await api("DELETE", `/v1/conversations/${c.id}`, undefined, { key: c.key })).status).toBe(404);
  });
});
