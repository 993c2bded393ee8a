// Reads near the user: the cortex's searches run in a D1 Sessions API session on the tenant's
// shard ("first-unconstrained": any replica), and the conversation's index outbox writes at the
// shard's primary and keeps the bookmark, so the next turn's memory_search reads at least that far
// and finds what the turn before indexed. GET /v1/search carries the shard's bookmark in
// `x-cortex-bookmark` the way every answer carries DB's in `x-d1-bookmark`.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { moveTenantStep } from "../../services/cortex/move";
import { assignShard, forgetRoute, routeOf, shardDatabase, shardNames } from "../../services/cortex/routing";
import { app } from "../../workers/chat/app";
import { ofType, resultText } from "../blocks";
import { spyD1 } from "./d1-spy";
import { createConversation, eventually, inConversation, newTenantWithId, send, turnMessages } from "./helpers";
import { spiedConversation, spyShard } from "./shard-spy";

describe("cortex sessions", () => {
  it("index a turn's messages at the primary and start the next turn's memory_search at that bookmark", async () => {
    const { key, id, spy } = await spiedConversation();
    await send(id, "the ocelot-ledger balance is 4242", key);
    await eventually(async () => spy.written().length > 0 || null);
    const last = spy.written().at(-1);
    expect(spy.sessions()).toContain("first-primary");
    const before = spy.sessions().length;

    const r = await send(id, '@tool memory_search {"query":"ocelot-ledger"}', key);
    const result = ofType(turnMessages(r)[2].content[0], "tool_result");
    expect(resultText(result)).toContain("ocelot-ledger");
    // The search's session started at the outbox's bookmark, not anywhere.
    const during = spy
      .sessions()
      .slice(before)
      .filter((s) => s !== "first-primary");
    expect(during.length).toBeGreaterThan(0);
    expect(during[0]).toBe(last);
  });

  it("never start a search on a shard at the bookmark of another (the tenant moved since the object's last write)", async () => {
    const { tenantId, key } = await newTenantWithId();
    const [S0, S1] = shardNames(env);
    await assignShard(env.DB, tenantId, S0);
    const s0 = spyShard(shardDatabase(env, S0));
    const s1 = spyShard(shardDatabase(env, S1));
    const id = await createConversation(undefined, key);
    await inConversation(id, async (instance) => {
      instance.env = { ...instance.env, [S0]: s0.db, [S1]: s1.db, CORTEX_ROUTE_TTL_SECONDS: "0" };
    });
    await send(id, "the margay-ledger balance is 777", key);
    await eventually(async () => s0.written().length > 0 || null);
    const moving = { ...(env as Env), CORTEX_ROUTE_TTL_SECONDS: "0" };
    for (let cursor = 0; ; ) {
      const step = await moveTenantStep(moving, { tenantId, to: S1, cursor, limit: 100 });
      if (step.next === null) break;
      cursor = Number(step.next);
    }
    forgetRoute(tenantId);
    const r = await send(id, '@tool memory_search {"query":"margay-ledger"}', key);
    expect(resultText(ofType(turnMessages(r)[2].content[0], "tool_result"))).toContain("margay-ledger");
    const old = new Set(s0.written());
    expect(s1.sessions().filter((b) => old.has(b))).toEqual([]);
  });

  it("run GET /v1/search unconstrained, or at the x-cortex-bookmark sent, and answer the shard's bookmark", async () => {
    const { tenantId, key } = await newTenantWithId();
    const shard = (await routeOf(env as Env, tenantId)).shard;
    const spy = spyShard(shardDatabase(env, shard));
    const search = async (headers: Record<string, string> = {}) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request("http://chat.test/v1/search?q=ocelot", { headers: { authorization: `Bearer ${key}`, ...headers } }),
        { ...(env as Env), [shard]: spy.db },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return res;
    };
    const plain = await search();
    expect(plain.status).toBe(200);
    expect(spy.sessions()).toEqual(["first-unconstrained"]);
    const answered = plain.headers.get("x-cortex-bookmark")!;
    // The shard's bookmark, naming the shard.
    expect(answered).toMatch(new RegExp(`^[0-9a-f]+(-[0-9a-f]+)+@${shard}$`));
    const bookmark = answered.slice(0, answered.lastIndexOf("@"));
    expect((await search({ "x-cortex-bookmark": answered })).status).toBe(200);
    expect(spy.sessions()[1]).toBe(bookmark);
    // A bare bookmark (answered before it named its shard) is taken as before; another shard's is not used.
    expect((await search({ "x-cortex-bookmark": bookmark })).status).toBe(200);
    expect(spy.sessions()[2]).toBe(bookmark);
    expect((await search({ "x-cortex-bookmark": `${bookmark}@CORTEX_SHARD_99` })).status).toBe(200);
    expect(spy.sessions()[3]).toBe("first-unconstrained");
    const bad = await search({ "x-cortex-bookmark": "not a bookmark" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("x-cortex-bookmark");
  });

  it("answer a search of many words in one call to the shard: weights, ranking and snippets are one statement", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    await send(id, "the heron pond freezes early", key);
    await send(id, "a heron nests by the old mill", key);
    await send(id, "the mill pond was drained in spring", key);
    const shard = (await routeOf(env as Env, tenantId)).shard;
    const spy = spyD1(shardDatabase(env, shard));
    const search = async () => {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request("http://chat.test/v1/search?q=heron%20pond%20mill%20spring&limit=2", {
          headers: { authorization: `Bearer ${key}` },
        }),
        { ...(env as Env), [shard]: spy.db },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return (await res.json()) as { data: { snippet: string }[]; next: string | null };
    };
    const page = await eventually(async () => {
      spy.roundTrips.length = 0;
      const p = await search();
      return p.data.length === 2 ? p : null;
    });
    expect(spy.roundTrips).toHaveLength(1);
    expect(page.next).not.toBeNull();
    expect(page.data.every((h) => /\[(heron|pond|mill|spring)\]/.test(h.snippet))).toBe(true);
  });
});
