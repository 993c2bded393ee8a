// Idempotency-Key on POST /v1/conversations: a retry of a create answers the conversation the key
// made (201, the same body shape) and creates nothing; another body under the key is a 422; two
// concurrent creates with one key make one conversation; keys are per tenant and live 24 hours.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { conversationCreateKeys } from "../../db/schema";
import { IDEMPOTENCY_TTL_MS } from "../../core/idempotency-key";
import type { ConversationDO } from "../../durable-objects/conversation/conversation-do";
import { app } from "../../workers/chat/app";
import { api, createConversation, newTenantWithId } from "./helpers";

const newKey = () => `create-${crypto.randomUUID()}`;
const create = (body: Record<string, unknown>, opts: { key: string; idempotencyKey?: string }) =>
  api("POST", "/v1/conversations", body, {
    key: opts.key,
    headers: opts.idempotencyKey === undefined ? {} : { "idempotency-key": opts.idempotencyKey },
  });
const listed = async (key: string) => {
  const r = await api("GET", "/v1/conversations?limit=100", undefined, { key });
  expect(r.status).toBe(200);
  return r.json.data.map((c) => c.id);
};

/** A create sent through the app with `bindings` over the worker's env (gates that land a request inside it). */
async function createWith(
  bindings: Partial<Env>,
  body: Record<string, unknown>,
  keys: { key: string; idempotencyKey: string },
) {
  const ctx = createExecutionContext();
  const req = new Request("http://chat.test/v1/conversations", {
    method: "POST",
    headers: {
      authorization: `Bearer ${keys.key}`,
      "content-type": "application/json",
      "idempotency-key": keys.idempotencyKey,
    },
    body: JSON.stringify(body),
  });
  const res = await app.fetch(req, { ...env, ...bindings } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    json: (await res.json()) as { id: string },
    replayed: res.headers.get("idempotent-replayed"),
  };
}

/** D1 (and the request's sessions) running `before` once, ahead of the first batch holding a statement that matches. */
function dbRunningBeforeBatch(
  matches: RegExp,
  before: () => Promise<unknown>,
): { db: D1Database; fired: () => boolean } {
  let fired = false;
  // workerd's prepared statement keeps its SQL as `statement`.
  const sqlOf = (s: D1PreparedStatement) => String((s as unknown as { statement?: unknown }).statement ?? "");
  const gated = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, prop) {
        if (prop === "batch")
          return async (statements: D1PreparedStatement[]) => {
            if (!fired && statements.some((s) => matches.test(sqlOf(s)))) {
              fired = true;
              await before();
            }
            return target.batch(statements);
          };
        if (prop === "withSession" && "withSession" in target)
          return (start?: string) => gated(target.withSession(start));
        const v: unknown = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return { db: gated(env.DB), fired: () => fired };
}

/** The conversation namespace, running `before` once ahead of the first `create` RPC of its stubs. */
function namespaceRunningBeforeCreate(before: () => Promise<unknown>): DurableObjectNamespace<ConversationDO> {
  let fired = false;
  const real = env.CONVERSATION;
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "get")
        return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => {
          const stub = target.get(id, options);
          return new Proxy(stub, {
            get(s, p) {
              if (p !== "create") return Reflect.get(s, p);
              return async (...args: Parameters<ConversationDO["create"]>) => {
                if (!fired) {
                  fired = true;
                  await before();
                }
                return s.create(...args);
              };
            },
          });
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("Idempotency-Key on POST /v1/conversations", () => {
  it("answers a retry with the same key and body with the same conversation, 201, and creates nothing", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    const body = { title: "trip plans", settings: { charsPerToken: 3 } };
    const first = await create(body, { key, idempotencyKey });
    expect(first.status).toBe(201);
    // The same request spelled another way (key order) is the same request.
    const retry = await create({ settings: { charsPerToken: 3 }, title: "trip plans" }, { key, idempotencyKey });
    expect(retry.status).toBe(201);
    expect(retry.json.id).toBe(first.json.id);
    expect(Object.keys(retry.json).sort()).toEqual(Object.keys(first.json).sort());
    expect(retry.json).toMatchObject({ title: "trip plans", messageCount: 0 });
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await listed(key)).toEqual([first.json.id]);
  });

  it("refuses the key with a different body: 422 idempotency_key_reused, nothing created", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    const first = await create({ title: "one" }, { key, idempotencyKey });
    expect(first.status).toBe(201);
    const other = await create({ title: "two" }, { key, idempotencyKey });
    expect(other.status).toBe(422);
    expect(other.json.error?.type).toBe("idempotency_key_reused");
    expect(other.json.error?.message).toMatch(/^Idempotency-Key: this key was already used for a different/);
    expect(await listed(key)).toEqual([first.json.id]);
  });

  it("makes one conversation of two concurrent creates with one key; both answer it", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    const [a, b, c] = await Promise.all([
      create({ title: "race" }, { key, idempotencyKey }),
      create({ title: "race" }, { key, idempotencyKey }),
      create({ title: "race" }, { key, idempotencyKey }),
    ]);
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(b.json.id).toBe(a.json.id);
    expect(c.json.id).toBe(a.json.id);
    expect(await listed(key)).toEqual([a.json.id]);
  });

  it("a create that loses the key's unique row to a concurrent one writes nothing and answers the winner's conversation", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    let winner: Awaited<ReturnType<typeof create>> | undefined;
    // The loser found the key free, then the winner created and took it before the loser's insert.
    const gate = dbRunningBeforeBatch(/insert into "conversation_create_keys"/i, async () => {
      winner = await create({ title: "race" }, { key, idempotencyKey });
    });
    const loser = await createWith({ DB: gate.db }, { title: "race" }, { key, idempotencyKey });
    expect(gate.fired()).toBe(true);
    expect(winner?.status).toBe(201);
    expect(loser.status).toBe(201);
    expect(loser.json.id).toBe(winner?.json.id);
    expect(loser.replayed).toBe("true");
    expect(await listed(key)).toEqual([loser.json.id]);
  });

  it("a retry while the winning create is still making its object waits for it and answers it", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    let retry: Promise<Awaited<ReturnType<typeof create>>> | undefined;
    // The key's row and the listing row are written; the object's head not yet.
    const ns = namespaceRunningBeforeCreate(async () => {
      retry = create({ title: "slow" }, { key, idempotencyKey });
      await new Promise((r) => setTimeout(r, 150));
    });
    const first = await createWith({ CONVERSATION: ns }, { title: "slow" }, { key, idempotencyKey });
    expect(first.status).toBe(201);
    const second = await retry;
    expect(second?.status).toBe(201);
    expect(second?.json.id).toBe(first.json.id);
    expect(await listed(key)).toEqual([first.json.id]);
  });

  it("keeps keys per tenant: another tenant's same key makes its own conversation", async () => {
    const one = await newTenantWithId();
    const two = await newTenantWithId();
    const idempotencyKey = newKey();
    const a = await create({ title: "shared key" }, { key: one.key, idempotencyKey });
    const b = await create({ title: "shared key" }, { key: two.key, idempotencyKey });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.json.id).not.toBe(a.json.id);
    expect(await listed(one.key)).toEqual([a.json.id]);
    expect(await listed(two.key)).toEqual([b.json.id]);
    // The other tenant's conversation is not readable with the key's first tenant.
    expect((await api("GET", `/v1/conversations/${b.json.id}`, undefined, { key: one.key })).status).toBe(404);
  });

  it("without the header, two creates make two conversations", async () => {
    const { key } = await newTenantWithId();
    const a = await create({ title: "plain" }, { key });
    const b = await create({ title: "plain" }, { key });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.json.id).not.toBe(a.json.id);
    expect((await listed(key)).sort()).toEqual([a.json.id, b.json.id].sort());
  });

  it("refuses a malformed key with the turn route's 400, creating nothing", async () => {
    const { key } = await newTenantWithId();
    const conversationId = await createConversation(undefined, key);
    for (const bad of ["x".repeat(256), "tab\there"]) {
      const refused = await create({ title: "bad key" }, { key, idempotencyKey: bad });
      const turn = await api(
        "POST",
        `/v1/conversations/${conversationId}/messages`,
        { content: "hi" },
        { key, headers: { "idempotency-key": bad } },
      );
      expect(turn.status).toBe(400);
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual(turn.json);
      expect(refused.json.error?.message).toMatch(/^Idempotency-Key: /);
    }
    expect(await listed(key)).toEqual([conversationId]);
  });

  it("answers a retry after the conversation was deleted with 404 not_found naming the key, creating nothing", async () => {
    const { key } = await newTenantWithId();
    const idempotencyKey = newKey();
    const first = await create({ title: "short-lived" }, { key, idempotencyKey });
    expect(first.status).toBe(201);
    expect((await api("DELETE", `/v1/conversations/${first.json.id}`, undefined, { key })).status).toBe(204);
    const retry = await create({ title: "short-lived" }, { key, idempotencyKey });
    expect(retry.status).toBe(404);
    expect(retry.json.error).toEqual({
      type: "not_found",
      message: `Idempotency-Key: the conversation created with this key (${first.json.id}) was deleted; send a new key to create another`,
    });
    expect(await listed(key)).toEqual([]);
  });

  it("forgets a key after 24 hours: the same key then creates a new conversation", async () => {
    const { key, tenantId } = await newTenantWithId();
    const idempotencyKey = newKey();
    const first = await create({ title: "old" }, { key, idempotencyKey });
    expect(first.status).toBe(201);
    const db = drizzle(env.DB);
    const row = and(eq(conversationCreateKeys.tenantId, tenantId), eq(conversationCreateKeys.key, idempotencyKey));
    const aged = new Date(Date.now() - IDEMPOTENCY_TTL_MS - 60_000).toISOString();
    await db.update(conversationCreateKeys).set({ createdAt: aged }).where(row);
    // Another body too: an expired key is bound to nothing.
    const again = await create({ title: "new" }, { key, idempotencyKey });
    expect(again.status).toBe(201);
    expect(again.json.id).not.toBe(first.json.id);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect((await listed(key)).sort()).toEqual([first.json.id, again.json.id].sort());
    const [kept] = await db.select().from(conversationCreateKeys).where(row);
    expect(kept.conversationId).toBe(again.json.id);
    // And it is bound to its new request now.
    const retry = await create({ title: "new" }, { key, idempotencyKey });
    expect(retry.json.id).toBe(again.json.id);
  });
});
