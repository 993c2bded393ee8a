// The tenant-wide turn limit (TENANT_TURN_RATE_LIMIT_PER_MINUTE): every turn of every key of a
// tenant, over HTTP or a websocket, also takes from one bucket of the tenant's, so a key at its own
// turn limit cannot go on by minting fresh keys (each with a full burst of its own).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { takeTenantTurn } from "../../durable-objects/rate-limiter-client";
import { callWith } from "./app-with-vars";
import { ofType } from "../blocks";
import { connectSocket, createConversation, inConversation, type Method, newTenant, newTenantWithId } from "./helpers";

/** The app with its real bindings but these variables. */
const call = <M extends Method, P extends string>(
  vars: Record<string, unknown>,
  method: M,
  path: P,
  key: string,
  body?: unknown,
) => callWith(vars, { method, path, key, body });

/** A RATE_LIMITER binding that counts its RPCs and hands every one to the real binding. */
function countingLimiter() {
  const names: string[] = [];
  const binding = {
    idFromName: (name: string) => (names.push(name), env.RATE_LIMITER.idFromName(name)),
    get: (id: DurableObjectId) => env.RATE_LIMITER.get(id),
  };
  return { names, binding: binding as unknown as Env["RATE_LIMITER"] };
}

describe("the tenant's turn limit", () => {
  it("stops a key at its turn limit from going on with keys it mints", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "1000",
      TURN_RATE_LIMIT_PER_MINUTE: "2",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "6",
    };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const turn = (k: string) => call(limits, "POST", `/v1/conversations/${id}/messages`, k, { content: "hi" });
    expect([(await turn(key)).status, (await turn(key)).status]).toEqual([200, 200]);
    const keyOver = await turn(key);
    expect(keyOver.status).toBe(429);
    expect(keyOver.json.error?.message).toMatch(/API key is over its limit of 2 turns per minute/);
    // Fresh keys each have a full burst of their own, but the tenant's bucket (6, of which the key's
    // two took two; its refused third took none) runs out after four more turns.
    const statuses: number[] = [];
    let over: Awaited<ReturnType<typeof turn>> | undefined;
    for (let round = 0; round < 5; round++) {
      const child = await call(limits, "POST", "/v1/keys", key, { name: `child ${round}` });
      expect(child.status).toBe(201);
      for (let i = 0; i < 2; i++) {
        const r = await turn(child.json.apiKey);
        statuses.push(r.status);
        if (r.status === 429) over ??= r;
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(over?.json.error?.type).toBe("rate_limited");
    expect(over?.json.error?.message).toMatch(
      /this tenant is over its limit of 6 turns per minute \(all its API keys together\)/,
    );
    // 6 a minute refills one every 10 s.
    const retry = Number(over?.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(10);
    // Another tenant is untouched; reads of this one still pass.
    const other = await newTenant();
    const otherId = await createConversation(undefined, other);
    expect((await call(limits, "POST", `/v1/conversations/${otherId}/messages`, other, { content: "hi" })).status).toBe(
      200,
    );
    expect((await call(limits, "GET", `/v1/conversations/${id}`, key)).status).toBe(200);
    // "0" turns the tenant's limit off.
    const child = await call(limits, "POST", "/v1/keys", key, { name: "late" });
    const off = { ...limits, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0" };
    expect(
      (await call(off, "POST", `/v1/conversations/${id}/messages`, child.json.apiKey, { content: "x" })).status,
    ).toBe(200);
  });

  it("counts channel turns and websocket send frames in the same bucket", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "0",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "3",
    };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const child = (await call(limits, "POST", "/v1/keys", key, { name: "socket" })).json.apiKey;
    await inConversation(id, async (instance) => {
      instance.env = { ...instance.env, ...limits };
    });
    expect((await call(limits, "POST", "/v1/channels/inbox/messages", key, { content: "one" })).status).toBe(200);
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${child}` });
    expect(s.status).toBe(101);
    s.ws!.send(JSON.stringify({ type: "send", content: "two" }));
    s.ws!.send(JSON.stringify({ type: "send", content: "three" }));
    await s.next(() => s.events.filter((e) => e.type === "turn_end").length === 2);
    s.ws!.send(JSON.stringify({ type: "send", content: "four" }));
    const refused = ofType(await s.next((e) => e.type === "error"), "error");
    expect(refused.error.type).toBe("rate_limited");
    expect(refused.error.message).toMatch(/this tenant is over its limit of 3 turns per minute/);
    expect(refused.error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    s.ws!.close();
    // HTTP turns of the tenant's first key are refused the same way.
    const http = await call(limits, "POST", `/v1/conversations/${id}/messages`, key, { content: "five" });
    expect(http.status).toBe(429);
    expect(http.json.error?.message).toMatch(/tenant/);
  });

  it("takes no turn token of the key when the tenant refuses the turn, nor the tenant's when the key does", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const turn = (vars: Record<string, string>) =>
      call(vars, "POST", `/v1/conversations/${id}/messages`, key, { content: "hi" });
    const tenantOf1 = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "2",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1",
    };
    expect((await turn(tenantOf1)).status).toBe(200);
    // Refused by the tenant (the key has one left): the key keeps it.
    expect((await turn(tenantOf1)).status).toBe(429);
    const keyOnly = { ...tenantOf1, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0" };
    expect((await turn(keyOnly)).status).toBe(200);
    expect((await turn(keyOnly)).status).toBe(429);
  });

  it("asks one limiter object per bucket owner, and none when every limit is off", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const limiter = countingLimiter();
    const vars = (v: Record<string, string>) => ({ ...v, RATE_LIMITER: limiter.binding });
    const turn = (v: Record<string, string>) =>
      call(vars(v), "POST", `/v1/conversations/${id}/messages`, key, { content: "hi" });
    expect(
      (
        await turn({
          RATE_LIMIT_PER_MINUTE: "0",
          TURN_RATE_LIMIT_PER_MINUTE: "0",
          TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
        })
      ).status,
    ).toBe(200);
    expect(limiter.names).toEqual([]);
    expect(
      (
        await turn({
          RATE_LIMIT_PER_MINUTE: "10",
          TURN_RATE_LIMIT_PER_MINUTE: "10",
          TENANT_TURN_RATE_LIMIT_PER_MINUTE: "10",
        })
      ).status,
    ).toBe(200);
    // The key's object (named by the key's digest) and the tenant's, named apart from any digest of a key or address.
    expect(limiter.names).toHaveLength(2);
    expect(new Set(limiter.names).size).toBe(2);
    // A read takes no turn token: only the key's object.
    limiter.names.length = 0;
    const read = await call(
      vars({ RATE_LIMIT_PER_MINUTE: "10", TURN_RATE_LIMIT_PER_MINUTE: "10", TENANT_TURN_RATE_LIMIT_PER_MINUTE: "10" }),
      "GET",
      `/v1/conversations/${id}`,
      key,
    );
    expect(read.status).toBe(200);
    expect(limiter.names).toHaveLength(1);
    // What the automation runner can take: one turn token of the tenant's, nothing when off.
    const one = { ...env, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1" } as Env;
    const fresh = await newTenantWithId();
    expect(await takeTenantTurn(one, fresh.tenantId)).toEqual({ ok: true });
    expect(await takeTenantTurn(one, fresh.tenantId)).toMatchObject({ ok: false, perMinute: 1 });
    limiter.names.length = 0;
    const off = { ...env, TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0", RATE_LIMITER: limiter.binding } as Env;
    expect(await takeTenantTurn(off, tenantId)).toEqual({ ok: true });
    expect(limiter.names).toEqual([]);
  });
});
