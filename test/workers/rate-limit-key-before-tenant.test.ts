// A turn takes from the key's buckets first and from the tenant's only once the key passed: a turn
// the key's limit refuses never holds one of the tenant's turn tokens, not even for the moment its
// key's limiter takes to answer, so another key's turn arriving meanwhile is not refused in the
// tenant's name while the tenant had a token (docs/api-notes.md, "a turn refused by the key's limit
// takes none of the tenant's turn tokens"). Websocket `send` frames take through the same function.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/ids";
import { takeRateLimit } from "../../durable-objects/rate-limiter-client";
import type { RateRule } from "../../durable-objects/rate-limiter-do";
import { ofType } from "../blocks";
import { callWith } from "./app-with-vars";
import { connectSocket, createConversation, inConversation, newTenant, newTenantWithId } from "./helpers";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "1",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "2",
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The real RATE_LIMITER, but the object named `slowName` answers `take` `ms` late (a limiter
 * object farther away), and every `take` is logged by the name of the object asked.
 */
function slowLimiter(slowName: string, ms: number) {
  const real = env.RATE_LIMITER;
  const takes: string[] = [];
  const names = new Map<string, string>();
  const binding = {
    idFromName: (name: string) => {
      const id = real.idFromName(name);
      names.set(id.toString(), name);
      return id;
    },
    get: (id: DurableObjectId) => {
      const stub = real.get(id);
      const name = names.get(id.toString()) ?? "";
      return {
        take: async (rules: RateRule[]) => {
          takes.push(name);
          if (name === slowName) await sleep(ms);
          return stub.take(rules);
        },
        refund: (rules: RateRule[]) => stub.refund(rules),
      };
    },
  };
  return { takes, binding: binding as unknown as Env["RATE_LIMITER"] };
}

const turn = (vars: Record<string, unknown>, key: string, id: string) =>
  callWith(vars, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content: "hi" } });

const mintKey = async (key: string, name: string): Promise<string> => {
  const made = await callWith(LIMITS, { method: "POST", path: "/v1/keys", key, body: { name } });
  expect(made.status).toBe(201);
  return made.json.apiKey as string;
};

describe("a turn over its key's limit and the tenant's bucket", () => {
  it("holds none of the tenant's tokens while its key's limiter answers, so another key's turn passes", async () => {
    const k1 = await newTenant();
    const id = await createConversation(undefined, k1);
    const k2 = await mintKey(k1, "second");
    const k3 = await mintKey(k1, "third");
    // K1 spends its one turn; the tenant has one of its two left.
    expect((await turn(LIMITS, k1, id)).status).toBe(200);
    const slow = slowLimiter(await sha256Hex(k1), 300);
    const vars = { ...LIMITS, RATE_LIMITER: slow.binding };
    // K1 knocks again; its key's object answers late, and refuses. K2 sends a turn meanwhile.
    const refusedK1 = turn(vars, k1, id);
    await sleep(100);
    const k2r = await turn(vars, k2, id);
    const k1r = await refusedK1;
    expect(k1r.status).toBe(429);
    expect(k1r.json.error?.message).toMatch(/this API key is over its limit of 1 turns per minute/);
    expect(k2r.status, JSON.stringify(k2r.json)).toBe(200);
    // The tenant's two tokens went to K1's first turn and K2's: a third key's turn is the tenant's 429.
    const k3r = await turn(LIMITS, k3, id);
    expect(k3r.status).toBe(429);
    expect(k3r.json.error?.message).toMatch(/this tenant is over its limit of 2 turns per minute/);
  });

  it("does the same for a websocket send frame", async () => {
    const k1 = await newTenant();
    const id = await createConversation(undefined, k1);
    const other = await createConversation(undefined, k1);
    const k2 = await mintKey(k1, "second");
    expect((await turn(LIMITS, k1, id)).status).toBe(200);
    const slow = slowLimiter(await sha256Hex(k1), 300);
    await inConversation(id, async (instance) => {
      instance.env = { ...instance.env, ...LIMITS, RATE_LIMITER: slow.binding };
    });
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${k1}` });
    expect(s.status).toBe(101);
    s.ws!.send(JSON.stringify({ type: "send", content: "over my key's limit" }));
    await sleep(100);
    const k2r = await turn(LIMITS, k2, other);
    const refused = ofType(await s.next((e) => e.type === "error"), "error");
    s.ws!.close();
    expect(refused.error.type).toBe("rate_limited");
    expect(refused.error.message).toMatch(/this API key is over its limit of 1 turns per minute/);
    expect(k2r.status, JSON.stringify(k2r.json)).toBe(200);
  });

  it("asks the tenant's limiter only once the key's passed, and gives the key's turn token back when the tenant refuses", async () => {
    const { tenantId, key } = await newTenantWithId();
    const keyHash = await sha256Hex(key);
    const tenantName = await sha256Hex(`tenant:${tenantId}`);
    const limiter = slowLimiter("", 0);
    const at = (limits: Record<string, string>) => ({ ...env, ...limits, RATE_LIMITER: limiter.binding }) as Env;
    const ask = { keyHash, tenantId, turn: true };
    // The key's one turn, then its refusal: the tenant's object is asked for the first only.
    expect(await takeRateLimit(at(LIMITS), ask)).toEqual({ ok: true });
    expect(await takeRateLimit(at(LIMITS), ask)).toMatchObject({ ok: false, bucket: "turns" });
    expect(limiter.takes).toEqual([keyHash, tenantName, keyHash]);
    // A fresh key of a tenant with no turn left: the tenant refuses, the key keeps its turn token.
    const fresh = await newTenantWithId();
    const freshHash = await sha256Hex(fresh.key);
    const tenantOf1 = { ...LIMITS, TURN_RATE_LIMIT_PER_MINUTE: "2", TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1" };
    const freshAsk = { keyHash: freshHash, tenantId: fresh.tenantId, turn: true };
    expect(await takeRateLimit(at(tenantOf1), freshAsk)).toEqual({ ok: true });
    expect(await takeRateLimit(at(tenantOf1), freshAsk)).toMatchObject({ ok: false, bucket: "tenant_turns" });
    const keyOnly = { ...tenantOf1, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0" };
    expect(await takeRateLimit(at(keyOnly), freshAsk)).toEqual({ ok: true });
    expect(await takeRateLimit(at(keyOnly), freshAsk)).toMatchObject({ ok: false, bucket: "turns" });
  });
});
