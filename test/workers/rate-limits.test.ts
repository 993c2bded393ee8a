// Per-key rate limits: 429 rate_limited with an exact Retry-After, a separate bucket for turns,
// keys counted apart, limits from the environment ("0" is off); failed authentications limited per
// client address.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/ids";
import type { RateLimiterDO } from "../../durable-objects/rate-limiter-do";
import { app } from "../../workers/chat/app";
import { clientAddress } from "../../workers/chat/auth-failures";
import type { ResponseOf } from "../route-types";
import { callWith } from "./app-with-vars";
import { spyD1 } from "./d1-spy";
import { connectSocket, createConversation, inConversation, type Method, newTenant } from "./helpers";
import { ofType } from "../blocks";

/** The app with its real bindings but these limits. */
const call = <M extends Method, P extends string>(
  limits: Record<string, string>,
  method: M,
  path: P,
  key: string,
  body?: unknown,
) => callWith(limits, { method, path, key, body });

describe("rate limits", () => {
  it("answer 429 rate_limited with Retry-After once a key passes its requests per minute, per key", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "3", TURN_RATE_LIMIT_PER_MINUTE: "0" };
    const key = await newTenant();
    const other = await newTenant();
    for (let i = 0; i < 3; i++) expect((await call(limits, "GET", "/v1/conversations", key)).status).toBe(200);
    const over = await call(limits, "GET", "/v1/conversations", key);
    expect(over.status).toBe(429);
    expect(over.json.error?.type).toBe("rate_limited");
    expect(over.json.error?.message).toMatch(/3 requests per minute/);
    // 3 a minute refills one token every 20 s.
    const retry = Number(over.headers.get("retry-after"));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(19);
    expect(retry).toBeLessThanOrEqual(20);
    // Another key is untouched; a bad key is a 401, never counted against a key.
    expect((await call(limits, "GET", "/v1/conversations", other)).status).toBe(200);
    expect((await call(limits, "GET", "/v1/conversations", "ck_nonsense")).status).toBe(401);
    expect((await call(limits, "GET", "/health", "")).status).toBe(200);
    // Off when the variable is "0".
    expect(
      (await call({ RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "0" }, "GET", "/v1/conversations", key))
        .status,
    ).toBe(200);
  });

  it("count turns in their own bucket, conversations and channels alike", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "100", TURN_RATE_LIMIT_PER_MINUTE: "2" };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await call(limits, "POST", `/v1/conversations/${id}/messages`, key, { content: "one" })).status).toBe(200);
    expect((await call(limits, "POST", `/v1/channels/inbox/messages`, key, { content: "two" })).status).toBe(200);
    const over = await call(limits, "POST", `/v1/conversations/${id}/messages`, key, { content: "three" });
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/2 turns per minute/);
    // One token refills every 30 s and the two turns before took some of that: at most 30 s to
    // wait, at least 1 (the exact arithmetic on a fixed clock is the next test).
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    // Reads still pass, and the refused turn saved nothing.
    const meta = await call(limits, "GET", `/v1/conversations/${id}`, key);
    expect(meta.status).toBe(200);
    expect(meta.json.messageCount).toBe(2);
  });

  it("refill at the stated rate: after Retry-After seconds the next request passes", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(await sha256Hex("bucket-test")));
    await runInDurableObject(stub, (limiter: RateLimiterDO) => {
      const rules = [{ bucket: "requests", perMinute: 6 }];
      const t0 = 1_000_000;
      for (let i = 0; i < 6; i++) expect(limiter.take(rules, t0).ok).toBe(true);
      const refused = limiter.take(rules, t0);
      expect(refused).toEqual({ ok: false, bucket: "requests", perMinute: 6, retryAfterSeconds: 10 });
      expect(limiter.take(rules, t0 + 9_999).ok).toBe(false);
      expect(limiter.take(rules, t0 + 10_000).ok).toBe(true);
      expect(limiter.take(rules, t0 + 10_001).ok).toBe(false);
      // A full minute idle refills to the cap, never beyond it.
      for (let i = 0; i < 6; i++) expect(limiter.take(rules, t0 + 600_000).ok).toBe(true);
      expect(limiter.take(rules, t0 + 600_000).ok).toBe(false);
      // Two buckets empty: the wait named is the longer one, so waiting it passes.
      const req = { bucket: "two-requests", perMinute: 60 };
      const turns = { bucket: "two-turns", perMinute: 1 };
      const t1 = t0 + 3_600_000;
      expect(limiter.take([req, turns], t1).ok).toBe(true);
      for (let i = 0; i < 59; i++) limiter.take([req], t1);
      const both = limiter.take([req, turns], t1);
      expect(both).toMatchObject({ ok: false, bucket: "two-turns", retryAfterSeconds: 60 });
      expect(limiter.take([req, turns], t1 + (both.ok ? 0 : both.retryAfterSeconds) * 1000).ok).toBe(true);
    });
  });

  it("take no turn token for a turn refused for want of a model (503), conversations and channels alike", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "1",
      MODEL_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: "",
    };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    for (const path of [
      `/v1/conversations/${id}/messages`,
      "/v1/channels/inbox/messages",
      `/v1/conversations/${id}/messages`,
    ] as const) {
      const r = await call(limits, "POST", path, key, { content: "hello" });
      expect(r.status).toBe(503);
      expect(r.json.error?.type).toBe("model_not_configured");
    }
    // The one turn token of the minute is still there once a model is.
    const withModel = { RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "1" };
    expect((await call(withModel, "POST", `/v1/conversations/${id}/messages`, key, { content: "now" })).status).toBe(
      200,
    );
  });
});

/** The app with its real bindings but these limits, called from this client address. */
async function callFrom<P extends string>(
  address: string,
  limits: Record<string, string>,
  path: P,
  key: string,
  db: D1Database = env.DB,
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = {
    "cf-connecting-ip": address,
    // A socket's ticket is looked at only on an upgrade (a plain GET is a 426 first).
    ...(path.includes("/ws?") ? { upgrade: "websocket" } : {}),
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  };
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, { headers }),
    { ...env, ...limits, DB: db } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    headers: res.headers,
    json: (await res.json().catch(() => null)) as ResponseOf<"GET", P>,
  };
}

/** An address in a /64 of its own (a client is counted by its /64). */
const someAddress = () => `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;
const unknownKey = () => `ck_${crypto.randomUUID().replace(/-/g, "")}${"x".repeat(11)}`;

describe("failed authentications per client address", () => {
  it("answer 429 rate_limited with Retry-After once an address passes its limit, while valid keys from elsewhere work", async () => {
    const limits = { AUTH_FAILURES_PER_MINUTE: "3" };
    const [a, b] = [someAddress(), someAddress()];
    const [valid, usedFromA] = [await newTenant(), await newTenant()];
    expect((await callFrom(a, limits, "/v1/conversations", usedFromA)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await callFrom(a, limits, "/v1/conversations", unknownKey())).status).toBe(401);
    const over = await callFrom(a, limits, "/v1/conversations", unknownKey());
    expect(over.status).toBe(429);
    expect(over.json!.error).toEqual({
      type: "rate_limited",
      message: expect.stringMatching(/failed authentications from this address.*3 per minute/),
    });
    // 3 a minute refills one every 20 s.
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(19);
    expect(retry).toBeLessThanOrEqual(20);
    // Another address is counted apart: its valid key works, its first failure is a 401.
    expect((await callFrom(b, limits, "/v1/conversations", valid)).status).toBe(200);
    expect((await callFrom(b, limits, "/v1/conversations", unknownKey())).status).toBe(401);
    // Meanwhile the blocked address costs no D1 read at all: another unknown key and a ticket are
    // refused at once, while the key it used a moment ago (in the caches) still works.
    const spy = spyD1(env.DB);
    expect((await callFrom(a, limits, "/v1/conversations", unknownKey(), spy.db)).status).toBe(429);
    expect(
      (
        await callFrom(
          a,
          limits,
          `/v1/conversations/conv_${"0".repeat(26)}/ws?ticket=wst_${"n".repeat(32)}`,
          "",
          spy.db,
        )
      ).status,
    ).toBe(429);
    expect(spy.roundTrips).toEqual([]);
    expect((await callFrom(a, limits, "/v1/conversations", usedFromA)).status).toBe(200);
    // "0" turns the limit off.
    expect((await callFrom(a, { AUTH_FAILURES_PER_MINUTE: "0" }, "/v1/conversations", unknownKey())).status).toBe(401);
  });

  it("count an IPv6 client by its /64, and an IPv4-mapped address as its IPv4", async () => {
    const limits = { AUTH_FAILURES_PER_MINUTE: "3" };
    const prefix = someAddress().replace(/::1$/, "");
    const statuses: number[] = [];
    for (let i = 1; i <= 5; i++)
      statuses.push(
        (await callFrom(`${prefix}:${i.toString(16)}::${i}`, limits, "/v1/conversations", unknownKey())).status,
      );
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    expect(clientAddress("2001:DB8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientAddress("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress(" 203.0.113.9 ")).toBe("203.0.113.9");
  });

  it("count wrong admin tokens as failures too", async () => {
    const limits = { AUTH_FAILURES_PER_MINUTE: "2" };
    const address = someAddress();
    for (let i = 0; i < 2; i++)
      expect((await callFrom(address, limits, "/v1/admin/tenants/ten_x/keys", "not-the-admin-token")).status).toBe(401);
    const over = await callFrom(address, limits, "/v1/admin/tenants/ten_x/keys", "not-the-admin-token");
    expect(over.status).toBe(429);
    expect(over.json!.error?.type).toBe("rate_limited");
    // Once blocked, the right token from that address is refused too: a guess that hits gets nowhere.
    const right = await callFrom(
      address,
      { ...limits, ADMIN_TOKEN: "the-admin-token" },
      "/v1/admin/tenants/ten_x/keys",
      "the-admin-token",
    );
    expect(right.status).toBe(429);
    expect(
      (
        await callFrom(
          someAddress(),
          { ...limits, ADMIN_TOKEN: "the-admin-token" },
          "/v1/admin/tenants/ten_x/keys",
          "the-admin-token",
        )
      ).status,
    ).toBe(404);
  });

  it("count bad websocket tickets as failures too", async () => {
    const limits = { AUTH_FAILURES_PER_MINUTE: "2" };
    const address = someAddress();
    const badTicket = () =>
      `/v1/conversations/conv_${"0".repeat(26)}/ws?ticket=wst_${crypto.randomUUID().replace(/-/g, "")}`;
    expect((await callFrom(address, limits, badTicket(), "")).status).toBe(401);
    expect((await callFrom(address, limits, "/v1/conversations", unknownKey())).status).toBe(401);
    const over = await callFrom(address, limits, badTicket(), "");
    expect(over.status).toBe(429);
    expect(over.json!.error?.type).toBe("rate_limited");
  });
});

describe("rate limits over a websocket", () => {
  it("count each send frame as a turn of the key that opened the socket (by header or by ticket)", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    // This conversation's object runs with a turn limit of 2 a minute (the suite's default is off).
    await inConversation(id, async (instance) => {
      instance.env = { ...instance.env, TURN_RATE_LIMIT_PER_MINUTE: "2" };
    });
    const ticket = (await call({}, "POST", `/v1/conversations/${id}/ws-ticket`, key)).json.ticket;
    const viaTicket = await connectSocket(`/v1/conversations/${id}/ws?ticket=${ticket}`);
    const viaHeader = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    expect([viaTicket.status, viaHeader.status]).toEqual([101, 101]);
    viaTicket.ws!.send(JSON.stringify({ type: "send", content: "one" }));
    await viaTicket.next((e) => e.type === "turn_end");
    viaHeader.ws!.send(JSON.stringify({ type: "send", content: "two" }));
    await viaHeader.next(
      (e) => e.type === "turn_end" && viaHeader.events.filter((x) => x.type === "turn_end").length === 2,
    );
    viaTicket.ws!.send(JSON.stringify({ type: "send", content: "three" }));
    const refused = ofType(await viaTicket.next((e) => e.type === "error"), "error");
    expect(refused.error.type).toBe("rate_limited");
    expect(refused.error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // The refusal names the turn it refused, unlike any turn that ran.
    expect(refused.turnId).toMatch(/^turn_/);
    expect(viaTicket.events.flatMap((e) => (e.type === "turn_start" ? [e.turnId] : []))).not.toContain(refused.turnId);
    // Nothing of the refused turn was saved; the key's bucket is shared with HTTP turns.
    const saved = (await call({}, "GET", `/v1/conversations/${id}/messages`, key)).json.data;
    expect(saved.filter((m) => m.role === "user").map((m) => m.content[0].text)).toEqual(["one", "two"]);
    const keyHash = await sha256Hex(key);
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyHash));
    const left = await runInDurableObject(limiter, async (instance: RateLimiterDO) =>
      instance.take([{ bucket: "turns", perMinute: 2 }]),
    );
    expect(left.ok).toBe(false);
  });
});

describe("websocket frames with limits on", () => {
  it("become turns in the order they arrived, however long each waits on the limiter", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    // A limiter that answers earlier frames more slowly than later ones (as a remote object may).
    let calls = 0;
    const slowFirst = {
      idFromName: (name: string) => name,
      get: () => ({
        take: async () => (await new Promise((r) => setTimeout(r, Math.max(0, 160 - 20 * calls++))), { ok: true }),
      }),
    };
    await inConversation(id, async (instance) => {
      instance.env = {
        ...instance.env,
        TURN_RATE_LIMIT_PER_MINUTE: "100",
        RATE_LIMITER: slowFirst as unknown as Env["RATE_LIMITER"],
      };
    });
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    const sent = Array.from({ length: 8 }, (_, i) => `frame ${i}`);
    for (const content of sent) s.ws!.send(JSON.stringify({ type: "send", content }));
    await s.next(() => s.events.filter((e) => e.type === "turn_end").length === sent.length);
    const saved = (await call({}, "GET", `/v1/conversations/${id}/messages`, key)).json.data;
    expect(saved.filter((m) => m.role === "user").map((m) => m.content[0].text)).toEqual(sent);
    expect(calls).toBe(sent.length);
  });

  it("take a request token for every other frame: a tool_results frame over the limit is refused, nothing written", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    const paused = (
      await call({}, "POST", `/v1/conversations/${id}/messages`, key, {
        content: `@tool get_weather {"city":"Riga"}`,
        tools,
      })
    ).json;
    expect(paused.stop_reason).toBe("requires_action");
    // A limiter that has no tokens left, and notes which buckets each frame asked for.
    const asked: string[][] = [];
    const empty = {
      idFromName: (name: string) => name,
      get: () => ({
        take: async (rules: { bucket: string }[]) => (
          asked.push(rules.map((r) => r.bucket)), { ok: false, bucket: "requests", perMinute: 5, retryAfterSeconds: 12 }
        ),
      }),
    };
    await inConversation(id, async (instance) => {
      instance.env = {
        ...instance.env,
        RATE_LIMIT_PER_MINUTE: "5",
        RATE_LIMITER: empty as unknown as Env["RATE_LIMITER"],
      };
    });
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    s.ws!.send(
      JSON.stringify({
        type: "tool_results",
        results: [{ tool_use_id: paused.requires_action!.calls[0].id, content: "sleet" }],
      }),
    );
    const refused = ofType(await s.next((e) => e.type === "error"), "error");
    expect(refused.error).toMatchObject({ type: "rate_limited", retryAfterSeconds: 12 });
    expect(refused.error.message).toContain("5 requests per minute");
    expect(asked).toEqual([["requests"]]);
    const saved = (await call({}, "GET", `/v1/conversations/${id}/messages`, key)).json.data;
    expect(saved).toHaveLength(2);
    // The socket stays open; a ping is a request like any other frame, refused the same way.
    s.ws!.send(JSON.stringify({ type: "ping" }));
    expect(ofType(await s.next((e) => e.type === "error" && e !== refused), "error").error.type).toBe("rate_limited");
    expect(asked).toEqual([["requests"], ["requests"]]);
    s.ws!.close();
  });
});
