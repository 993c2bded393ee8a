// A new tenant's first index write assigns its cortex shard inside the write (services/cortex/shard.ts):
// the bookmark the conversation keeps must name the shard that write reached, not the stand-in
// handed out before it (the first shard), or the next memory_search would not start its session there.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { leastFullShard, routeOf, shardDatabase } from "../../services/cortex/routing";
import type { CortexMark } from "../../services/cortex/shard";
import { createConversation, eventually, inConversation, newTenantWithId, send } from "./helpers";
import { spyShard } from "./shard-spy";

describe("a fresh tenant's first index bookmark", () => {
  it("names the shard the first write was assigned, and the next memory_search starts there", async () => {
    // Make CORTEX_SHARD_1 (not the stand-in's CORTEX_SHARD_0) the next new tenant's shard.
    for (let i = 0; (await leastFullShard(env)) !== "CORTEX_SHARD_1" && i < 10; i++)
      await routeOf(env, `ten_filler${Date.now()}${i}`);
    expect(await leastFullShard(env)).toBe("CORTEX_SHARD_1");
    const { tenantId, key } = await newTenantWithId();
    expect(await routeOf(env, tenantId, { assign: false })).toBeNull();
    const id = await createConversation(undefined, key);
    const spy = spyShard(shardDatabase(env, "CORTEX_SHARD_1"));
    await inConversation(id, async (o) => {
      o.env = { ...o.env, CORTEX_SHARD_1: spy.db };
    });

    await send(id, "my boat is named kumquatzorblat", key);
    await eventually(async () => spy.written().length > 0 || null);
    const mark = await eventually(() =>
      inConversation(
        id,
        (o) => (o as unknown as { scope: { cortexBookmark: CortexMark | null } }).scope.cortexBookmark,
      ),
    );
    const route = await routeOf(env, tenantId, { assign: false });
    expect(route?.shard).toBe("CORTEX_SHARD_1");
    expect(mark.shard).toBe(route?.shard);

    const before = spy.sessions().length;
    const last = spy.written().at(-1);
    await send(id, '@tool memory_search {"query":"kumquatzorblat"}', key);
    const during = spy
      .sessions()
      .slice(before)
      .filter((s) => s !== "first-primary");
    expect(during[0]).toBe(last);
  });
});
