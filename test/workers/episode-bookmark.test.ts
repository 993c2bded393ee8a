// A fold's episode reaches the tenant's cortex shard through the index outbox, which then moves the
// object's read bookmark past that write, as it does for a batch of messages: the next memory_search
// starts its session where the episode write left the shard, so a replica there has the episode.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { CortexMark } from "../../services/cortex/shard";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { ofType, resultText } from "../blocks";
import { createConversation, eventually, inConversation, newTenantWithId, send, turnMessages } from "./helpers";
import { replicaBehind, type SearchStart } from "./replica-behind";
import { latest, spyShard } from "./shard-spy";

describe("a fold episode's shard write", () => {
  it("moves the object's read bookmark, where the next memory_search starts and finds the episode", async () => {
    const { tenantId, key } = await newTenantWithId();
    const shard = (await routeOf(env as Env, tenantId)).shard;
    let held = "";
    const searches: SearchStart[] = [];
    const spy = spyShard(
      replicaBehind(shardDatabase(env, shard), {
        behind: () => held,
        kind: "episode",
        onSearch: (s) => searches.push(s),
      }),
    );
    const id = await createConversation(undefined, key);
    await inConversation(id, (i) => {
      i.env = { ...i.env, [shard]: spy.db };
    });
    await send(id, "a first turn about the harbour", key);
    await eventually(async () => spy.written().length > 0 || null);
    await inConversation(id, async (i) => {
      await i.outbox.pending();
      await i.outbox.settled();
    });
    // A replica at the object's bookmark after the first turn: the episode, written later, is not on it.
    held = latest(spy.written());

    const from = spy.log.length;
    const bookmark = await inConversation(id, async (i) => {
      const head = i.record.head!;
      i.store.putOutbox("episode:job_episode_bookmark", {
        tenantId: head.tenantId,
        conversationId: head.id,
        foldJobId: "job_episode_bookmark",
        throughSeq: 2,
        summary: "the wallaby-lantern episode summary",
        at: new Date().toISOString(),
      });
      await i.outbox.pending();
      return (i as unknown as { scope: { cortexBookmark: CortexMark | null } }).scope.cortexBookmark;
    });
    const episodeWrite = latest(spy.written(from));
    expect(episodeWrite > held, "the episode is written after the first turn's messages").toBe(true);
    expect.soft(bookmark?.shard).toBe(shard);
    expect.soft(bookmark!.bookmark >= episodeWrite, "the object's bookmark reaches the episode write").toBe(true);

    const r = await send(id, '@tool memory_search {"query":"wallaby-lantern"}', key);
    expect(searches.length).toBeGreaterThan(0);
    expect.soft(searches[0].start >= episodeWrite, "memory_search starts at or after the episode write").toBe(true);
    // So a replica at that start has the episode.
    expect
      .soft(resultText(ofType(turnMessages(r)[2].content[0], "tool_result")))
      .toMatch(new RegExp(`episode of conversation ${id} through seq 2 .*wallaby`));
  });
});
