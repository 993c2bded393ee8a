// A request's answered `x-d1-bookmark` covers the D1 writes a Durable Object made for it on its own
// binding (outside the request's session): a conversation's purge, a channel's listing row, the
// conversation a channel's message creates. Locally there is only the primary, so "a replica at the
// answered bookmark sees the write" is checked as "the answered bookmark is at or after the
// primary's position right after each of the object's D1 statements" (bookmarks order as strings;
// taken after each statement, as a turn's own after-reply writes move the primary on before the
// request is over). And a channel message
// that neither creates nor rotates its conversation makes no D1 call before its turn starts: the
// channel's activity clock is the object's own, its listing row follows in the background.
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { channelObjectName } from "../../durable-objects/channel-do";
import { app } from "../../workers/chat/app";
import { inObject, watchWrites } from "./d1-watch";
import { api, newTenant, newTenantWithId } from "./helpers";

/** A read's bookmark: where a client that just listed something stands. */
async function readBookmark(key: string): Promise<string> {
  const r = await api("GET", "/v1/conversations?limit=1", undefined, { key });
  return r.headers.get("x-d1-bookmark")!;
}

const conversationStub = (id: string) =>
  env.CONVERSATION.get(env.CONVERSATION.idFromName(id)) as unknown as DurableObjectStub;
const channelStub = (tenantId: string, name: string) =>
  env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, name))) as unknown as DurableObjectStub;

/** The answer's bookmark is at or after where the object's writes reached: a replica at it sees them. */
function expectCovers(answered: string | null, reached: string | null): void {
  expect(reached, "the object wrote nothing to D1").toBeTruthy();
  expect(answered, "no bookmark answered").toBeTruthy();
  expect(answered! >= reached!, `answered ${answered}, the object's writes reached ${reached}`).toBe(true);
}

describe("the answered bookmark covers a Durable Object's D1 writes", () => {
  it("DELETE /v1/conversations/:id: the purge's (a replica at the answer no longer lists it)", async () => {
    const key = await newTenant();
    const made = await api("POST", "/v1/conversations", { title: "doomed" }, { key });
    expect(made.status).toBe(201);
    const listed = await api("GET", "/v1/conversations?limit=10", undefined, {
      key,
      headers: { "x-d1-bookmark": made.headers.get("x-d1-bookmark")! },
    });
    const bList = listed.headers.get("x-d1-bookmark")!;
    const watched = await watchWrites(conversationStub(made.json.id));
    const del = await api("DELETE", `/v1/conversations/${made.json.id}`, undefined, {
      key,
      headers: { "x-d1-bookmark": bList },
    });
    expect(del.status).toBe(204);
    expectCovers(del.headers.get("x-d1-bookmark"), watched.reached());
    const gone = await api("GET", "/v1/conversations?limit=10", undefined, {
      key,
      headers: { "x-d1-bookmark": del.headers.get("x-d1-bookmark")! },
    });
    expect(gone.json.data.map((c) => c.id)).not.toContain(made.json.id);
  });

  it("PATCH and DELETE /v1/channels/:name: the channel's listing row", async () => {
    const { tenantId, key } = await newTenantWithId();
    const watched = await watchWrites(channelStub(tenantId, "bookmarked"));
    try {
      const patched = await api(
        "PATCH",
        "/v1/channels/bookmarked",
        { rotationSeconds: 600 },
        { key, headers: { "x-d1-bookmark": await readBookmark(key) } },
      );
      expect(patched.status, patched.text).toBe(200);
      expect(patched.json).toMatchObject({ name: "bookmarked", rotationSeconds: 600 });
      expect(patched.json).not.toHaveProperty("bookmark");
      expectCovers(patched.headers.get("x-d1-bookmark"), watched.reached());
      const removed = await api("DELETE", "/v1/channels/bookmarked", undefined, {
        key,
        headers: { "x-d1-bookmark": await readBookmark(key) },
      });
      expect(removed.status).toBe(204);
      expectCovers(removed.headers.get("x-d1-bookmark"), watched.reached());
    } finally {
      await watched.stop();
    }
  });

  it("POST /v1/channels/:name/messages: the conversation it creates and the channel's row", async () => {
    const { tenantId, key } = await newTenantWithId();
    const watched = await watchWrites(channelStub(tenantId, "fresh"));
    try {
      const sent = await api(
        "POST",
        "/v1/channels/fresh/messages",
        { content: "hello" },
        { key, headers: { "x-d1-bookmark": await readBookmark(key) } },
      );
      expect(sent.status, sent.text).toBe(200);
      expectCovers(sent.headers.get("x-d1-bookmark"), watched.reached());
    } finally {
      await watched.stop();
    }
  });
});

// The channel object's D1, counting calls and holding each one (as a slow primary far away would).
function slowD1(real: D1Database, delayMs: number): { db: D1Database; calls: string[] } {
  const calls: string[] = [];
  const hold = <T>(sql: string, run: () => Promise<T>) => {
    calls.push(sql);
    return new Promise<T>((resolve, reject) => setTimeout(() => run().then(resolve, reject), delayMs));
  };
  const statement = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (prop === "bind") return (...a: unknown[]) => statement(target.bind(...a), sql);
        if (["run", "all", "raw", "first"].includes(String(prop)))
          return (...a: unknown[]) => hold(sql, () => (v as (...x: unknown[]) => Promise<unknown>).apply(target, a));
        return (v as (...x: unknown[]) => unknown).bind(target);
      },
    });
  const wrap = <T extends D1Database | D1DatabaseSession>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === "prepare") return (sql: string) => statement(t.prepare(sql), sql);
        if (prop === "batch") return (s: D1PreparedStatement[]) => hold("batch", () => t.batch(s));
        if (prop === "withSession" && "withSession" in t) return (start?: string) => wrap(t.withSession(start));
        const v: unknown = Reflect.get(t, prop);
        return typeof v === "function" ? (v as (...x: unknown[]) => unknown).bind(t) : v;
      },
    });
  return { db: wrap(real), calls };
}

describe("a channel message that neither creates nor rotates", () => {
  it("starts its turn with no D1 call by the channel object (its listing's activity follows in the background)", async () => {
    const { tenantId, key } = await newTenantWithId();
    const warm = await api("POST", "/v1/channels/hot/messages", { content: "warm up" }, { key });
    expect(warm.status, warm.text).toBe(200);
    const stub = channelStub(tenantId, "hot");
    let slow: ReturnType<typeof slowD1> = { db: env.DB, calls: [] };
    const real = await inObject(stub, async (instance) => {
      const before = instance.env;
      slow = slowD1(before.DB, 1500);
      instance.env = { ...before, DB: slow.db };
      return before;
    });
    try {
      const ctx = createExecutionContext();
      const started = Date.now();
      const res = await app.fetch(
        new Request("http://chat.test/v1/channels/hot/messages", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
          body: JSON.stringify({ content: "second" }),
        }),
        env,
        ctx,
      );
      // An SSE answer is made once the conversation object took the turn: the turn has started.
      const callsBeforeTurn = [...slow.calls];
      const tookMs = Date.now() - started;
      expect(res.status).toBe(200);
      await res.text();
      expect(callsBeforeTurn).toEqual([]);
      expect(tookMs).toBeLessThan(1500);
      expect(res.headers.get("x-conversation-id")).toBe(warm.json.conversationId);
      // The object's clock moved at once; GET answers it.
      const shown = (await api("GET", "/v1/channels/hot", undefined, { key })).json;
      expect(Date.parse(String(shown.lastActivityAt))).toBeGreaterThanOrEqual(started);
    } finally {
      await inObject(stub, async (instance) => {
        instance.env = real;
      });
    }
    // The listing row follows (in the background, through the object's real D1 again).
    const end = Date.now() + 10_000;
    for (;;) {
      const listed = (await api("GET", "/v1/channels", undefined, { key })).json.data[0];
      const shown = (await api("GET", "/v1/channels/hot", undefined, { key })).json;
      if (listed?.lastActivityAt === shown.lastActivityAt) break;
      expect(Date.now() < end, `listing ${listed?.lastActivityAt}, object ${shown.lastActivityAt}`).toBe(true);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});
