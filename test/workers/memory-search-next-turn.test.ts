// The turn right after another finds that turn's messages with memory_search, even while the
// object's background indexing of them is still running (a fresh tenant's first write, which
// assigns its shard, always is): the search waits, bounded, for the run in progress.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { INDEX_SETTLE_MS } from "../../durable-objects/conversation/tool-context";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { ofType, resultText } from "../blocks";
import {
  createConversation,
  eventually,
  inConversation,
  newTenant,
  newTenantWithId,
  send,
  turnMessages,
} from "./helpers";

const searchResult = (r: { text: string }) => resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));

/** The shard's binding with its primary's statements held until `release` (reads run as ever). */
function heldPrimary(real: D1Database) {
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const held = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(inner, p) {
        const value = Reflect.get(inner, p);
        if (typeof value !== "function") return value;
        if (p === "prepare" || p === "bind") return (...args: unknown[]) => held(value.apply(inner, args));
        if (p === "getBookmark") return value.bind(inner);
        return async (...args: unknown[]) => {
          await gate;
          return value.apply(inner, args);
        };
      },
    });
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "withSession")
        return (start?: string) => {
          const session = target.withSession(start);
          return start === "first-primary" ? held(session) : session;
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, release };
}

describe("memory_search on the next turn", () => {
  it("finds a fresh tenant's previous turn, asked at once", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await send(id, "my boat is named kumquatzorblat", key)).status).toBe(200);
    const r = await send(id, '@tool memory_search {"query":"kumquatzorblat"}', key);
    const text = searchResult(r);
    expect(text).toContain("matches for");
    expect(text).toContain("kumquatzorblat");
  });

  it("waits for an index write that hangs no longer than INDEX_SETTLE_MS", async () => {
    const { tenantId, key } = await newTenantWithId();
    const shard = (await routeOf(env, tenantId)).shard;
    const hold = heldPrimary(shardDatabase(env, shard));
    const id = await createConversation(undefined, key);
    await inConversation(id, async (o) => {
      o.env = { ...o.env, [shard]: hold.db };
    });
    expect((await send(id, "my kite is named quillowmarsh", key)).status).toBe(200);
    const started = Date.now();
    const r = await send(id, '@tool memory_search {"query":"quillowmarsh"}', key);
    const took = Date.now() - started;
    // It waited for the run (the write never landed, so nothing is found), and then went on: the
    // write stays held, so a wait with no bound would never end (the margin is a loaded machine's turn).
    expect(took).toBeGreaterThanOrEqual(INDEX_SETTLE_MS - 100);
    expect(took).toBeLessThan(INDEX_SETTLE_MS + 20_000);
    expect(searchResult(r)).toContain("no memory matches");
    // Released, the run finishes: the next search finds the message.
    hold.release();
    await inConversation(id, async (o) => {
      o.env = { ...o.env, [shard]: shardDatabase(env, shard) };
    });
    await eventually(async () => {
      const again = await send(id, '@tool memory_search {"query":"quillowmarsh"}', key);
      return searchResult(again).includes("matches for") || null;
    }, 20_000);
  });
});
