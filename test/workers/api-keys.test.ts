// API key management: create / list / revoke for a tenant's own keys and for the operator,
// secrets shown once, revocation effective at once in the revoking isolate and within the auth
// cache's bound everywhere else, revoked keys' tickets and sockets dead too.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../core/ids";
import { MAX_ACTIVE_KEYS } from "../../services/keys/api-keys";
import { AUTH_CACHE_MS, forgetIsolateKeys, keyForHash } from "../../services/keys/auth";
import { revokeEdgeKey, writeEdgeKey } from "../../services/keys/edge-key-cache";
import { ISOLATE_RECHECK_MS } from "../../services/keys/isolate-key-cache";
import { spyD1 } from "./d1-spy";
import { ADMIN, api, connectSocket, createConversation } from "./helpers";

async function tenant(): Promise<{ id: string; key: string }> {
  const r = await api("POST", "/v1/admin/tenants", { name: `k-${crypto.randomUUID()}` }, { key: ADMIN });
  expect(r.status).toBe(201);
  return { id: r.json.tenant.id, key: r.json.apiKey };
}

const createKey = async (key: string, body: unknown = {}) => {
  const r = await api("POST", "/v1/keys", body, { key });
  expect(r.status, r.text).toBe(201);
  return r.json as {
    key: {
      id: string;
      name: string | null;
      last4: string;
      createdAt: string;
      expiresAt: string | null;
      revokedAt: string | null;
    };
    apiKey: string;
  };
};
const unknownKeyAnswer = async () => api("GET", "/v1/conversations", undefined, { key: `ck_${"u".repeat(43)}` });
const works = async (key: string) => (await api("GET", "/v1/conversations", undefined, { key })).status === 200;

describe("self-service keys", () => {
  it("create a key whose secret is shown once, works at once for the same tenant, and lists without secrets", async () => {
    const t = await tenant();
    const conv = await createConversation(undefined, t.key);
    const made = await createKey(t.key, { name: "ci deploy" });
    expect(made.apiKey).toMatch(/^ck_[A-Za-z0-9_-]{43}$/);
    expect(made.key).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Z]{26}$/),
      name: "ci deploy",
      last4: made.apiKey.slice(-4),
      createdAt: expect.any(String),
      expiresAt: null,
      revokedAt: null,
    });
    // The new key sees the tenant's conversations.
    const seen = await api("GET", "/v1/conversations", undefined, { key: made.apiKey });
    expect(seen.json.data.map((c) => c.id)).toContain(conv);
    const list = await api("GET", "/v1/keys", undefined, { key: made.apiKey });
    expect(list.status).toBe(200);
    expect(list.json.data.map((k) => [k.name, k.current])).toEqual([
      ["ci deploy", true],
      ["default", false],
    ]);
    expect(list.json.next).toBeNull();
    for (const secret of [made.apiKey, t.key, await sha256Hex(made.apiKey), await sha256Hex(t.key)])
      expect(list.text).not.toContain(secret);
    expect(Object.keys(list.json.data[0]).sort()).toEqual([
      "createdAt",
      "current",
      "expiresAt",
      "id",
      "last4",
      "name",
      "revokedAt",
    ]);
    // The digest is what D1 holds; the secret is nowhere.
    const rows = JSON.stringify(
      (await env.DB.prepare(`SELECT * FROM api_keys WHERE tenant_id = ?`).bind(t.id).all()).results,
    );
    expect(rows).toContain(await sha256Hex(made.apiKey));
    expect(rows).not.toContain(made.apiKey);
  });

  it("page the list newest first by cursor", async () => {
    const t = await tenant();
    const made = [];
    for (let i = 0; i < 4; i++) made.push((await createKey(t.key, { name: `k${i}` })).key.id);
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 5; pages++) {
      const r = await api("GET", `/v1/keys?limit=2${cursor ? `&cursor=${cursor}` : ""}`, undefined, { key: t.key });
      expect(r.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.data.map((k) => k.id));
      if (!r.json.next) break;
      cursor = String(r.json.next);
    }
    expect(seen.slice(0, 4)).toEqual([...made].reverse());
    expect(seen).toHaveLength(5);
  });

  it("revoke a key: it answers 401 like an unknown key right away, even though it was just cached, and cannot make keys", async () => {
    const t = await tenant();
    const victim = await createKey(t.key, { name: "leaked" });
    // Cache the key in this isolate first: revocation must drop the entry, not wait it out.
    expect(await works(victim.apiKey)).toBe(true);
    const revoked = await api("DELETE", `/v1/keys/${victim.key.id}`, undefined, { key: t.key });
    expect(revoked.status).toBe(200);
    expect(revoked.json.key).toMatchObject({ id: victim.key.id, name: "leaked", revokedAt: expect.any(String) });
    const after = await api("GET", "/v1/conversations", undefined, { key: victim.apiKey });
    const unknown = await unknownKeyAnswer();
    expect(after.status).toBe(401);
    expect(after.text).toBe(unknown.text);
    expect((await api("POST", "/v1/keys", {}, { key: victim.apiKey })).status).toBe(401);
    // Revoking again changes nothing; the key stays listed as revoked.
    const again = await api("DELETE", `/v1/keys/${victim.key.id}`, undefined, { key: t.key });
    expect(again.json.key.revokedAt).toBe(revoked.json.key.revokedAt);
    const listed = (await api("GET", "/v1/keys", undefined, { key: t.key })).json.data.find(
      (k) => k.id === victim.key.id,
    );
    expect(listed!.revokedAt).toBe(revoked.json.key.revokedAt);
    expect(await works(t.key)).toBe(true);
  });

  it("revoke the calling key itself, but never the tenant's last active key", async () => {
    const t = await tenant();
    const self = (await api("GET", "/v1/keys", undefined, { key: t.key })).json.data[0];
    const last = await api("DELETE", `/v1/keys/${self.id}`, undefined, { key: t.key });
    expect(last.status).toBe(409);
    expect(last.json.error).toEqual({ type: "conflict", message: expect.stringMatching(/last active key/) });
    expect(await works(t.key)).toBe(true);
    // Rotation: a new key first, then the old one revokes itself.
    const next = await createKey(t.key, { name: "rotated" });
    expect((await api("DELETE", `/v1/keys/${self.id}`, undefined, { key: t.key })).status).toBe(200);
    expect(await works(t.key)).toBe(false);
    expect(await works(next.apiKey)).toBe(true);
    // An expired key does not count as the one that keeps the tenant in.
    const soon = await createKey(next.apiKey, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await env.DB.prepare(`UPDATE api_keys SET expires_at = ? WHERE id = ?`)
      .bind(new Date(Date.now() - 1000).toISOString(), soon.key.id)
      .run();
    expect((await api("DELETE", `/v1/keys/${next.key.id}`, undefined, { key: next.apiKey })).status).toBe(409);
  });

  it("never leave the tenant only keys that end sooner than the one revoked", async () => {
    const t = await tenant();
    const lasting = (await api("GET", "/v1/keys", undefined, { key: t.key })).json.data[0];
    const hour = new Date(Date.now() + 3600_000).toISOString();
    const short = await createKey(t.key, { expiresAt: hour });
    // A short-lived key may not revoke the one lasting key, nor that key revoke itself: the tenant
    // would be shut out when the short one ends.
    for (const caller of [short.apiKey, t.key]) {
      const r = await api("DELETE", `/v1/keys/${lasting.id}`, undefined, { key: caller });
      expect(r.status).toBe(409);
      expect(r.json.error?.message).toMatch(/last active key \(no other active key lasts as long as it\)/);
    }
    // A key expiring later than the revoked one outlasts it; one that never expires outlasts any.
    const longer = await createKey(t.key, { expiresAt: new Date(Date.now() + 7200_000).toISOString() });
    expect((await api("DELETE", `/v1/keys/${short.key.id}`, undefined, { key: longer.apiKey })).status).toBe(200);
    const second = await createKey(t.key, { name: "second lasting" });
    expect((await api("DELETE", `/v1/keys/${lasting.id}`, undefined, { key: longer.apiKey })).status).toBe(200);
    expect(await works(second.apiKey)).toBe(true);
  });

  it("give one tenant per name when the operator creates it twice at once: one 201, the rest 409", async () => {
    const name = `race-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => api("POST", "/v1/admin/tenants", { name }, { key: ADMIN })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it("name the existing tenant in a create's 409, so a create whose answer was lost still gets its key", async () => {
    const name = `lost-${crypto.randomUUID()}`;
    const first = await api("POST", "/v1/admin/tenants", { name }, { key: ADMIN });
    expect(first.status).toBe(201);
    const id: string = first.json.tenant.id;
    // The operator never saw the first answer and sends the create again.
    const again = await api("POST", "/v1/admin/tenants", { name }, { key: ADMIN });
    expect(again.status).toBe(409);
    expect(again.json.error?.message).toContain(`/v1/admin/tenants/${id}/keys`);
    const minted = await api("POST", `/v1/admin/tenants/${id}/keys`, { name: "recovered" }, { key: ADMIN });
    expect(minted.status).toBe(201);
    expect((await api("GET", "/v1/conversations", undefined, { key: minted.json.apiKey })).status).toBe(200);
  });

  it("refuse bad input with a 400 naming the field, and writes nothing", async () => {
    const t = await tenant();
    const count = async () =>
      (await env.DB.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ?`)
        .bind(t.id)
        .first<{ n: number }>())!.n;
    const before = await count();
    for (const [body, field] of [
      [{ name: "" }, "name"],
      [{ name: "bell\u0007" }, "name"],
      [{ name: "next\u0085line" }, "name"],
      [{ name: "csi\u009b31m" }, "name"],
      [{ name: "a\u2028b" }, "name"],
      [{ name: "\u202eevil" }, "name"],
      [{ name: "\u200b" }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ expiresAt: "2001-01-01T00:00:00Z" }, "expiresAt"],
      [{ expiresAt: "tomorrow" }, "expiresAt"],
      [{ secret: "mine" }, "secret"],
    ] as const) {
      const r = await api("POST", "/v1/keys", body, { key: t.key });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error?.message, JSON.stringify(body)).toContain(field);
    }
    expect((await api("GET", "/v1/keys?cursor=conv_01", undefined, { key: t.key })).status).toBe(400);
    expect((await api("GET", "/v1/keys?limit=500", undefined, { key: t.key })).status).toBe(400);
    expect(await count()).toBe(before);
  });

  it("never let a key make one that outlives it: an expiring key makes only keys that expire by then", async () => {
    const t = await tenant();
    const ends = new Date(Date.now() + 60_000);
    const short = await createKey(t.key, { name: "short", expiresAt: ends.toISOString() });
    const count = async () =>
      (await env.DB.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE tenant_id = ?`)
        .bind(t.id)
        .first<{ n: number }>())!.n;
    const before = await count();
    const later = (ms: number) => new Date(ends.getTime() + ms).toISOString();
    for (const body of [{}, { name: "forever" }, { expiresAt: later(1) }, { expiresAt: later(365 * 86_400_000) }]) {
      const r = await api("POST", "/v1/keys", body, { key: short.apiKey });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error?.type).toBe("invalid_request");
      expect(r.json.error?.message).toMatch(/^expiresAt: /);
      expect(r.json.error?.message).toContain(ends.toISOString());
    }
    expect(await count()).toBe(before);
    // Up to its own expiry is fine, the same instant written with another offset too.
    const same = await createKey(short.apiKey, { expiresAt: ends.toISOString().replace("Z", "+00:00") });
    expect(same.key.expiresAt).toBe(ends.toISOString());
    expect((await createKey(short.apiKey, { expiresAt: later(-30_000) })).key.expiresAt).toBe(later(-30_000));
    // A key that never expires, and the operator, may make keys that never expire.
    expect((await createKey(t.key)).key.expiresAt).toBeNull();
    const ops = await api("POST", `/v1/admin/tenants/${t.id}/keys`, {}, { key: ADMIN });
    expect(ops.status).toBe(201);
    expect(ops.json.key.expiresAt).toBeNull();
  });

  it(`cap a tenant at ${MAX_ACTIVE_KEYS} active keys with a 409, counting revoked ones out`, async () => {
    const t = await tenant();
    const ids: string[] = [];
    for (let i = 1; i < MAX_ACTIVE_KEYS; i++) ids.push((await createKey(t.key)).key.id);
    const over = await api("POST", "/v1/keys", {}, { key: t.key });
    expect(over.status).toBe(409);
    expect(over.json.error?.message).toContain(`${MAX_ACTIVE_KEYS} active keys`);
    expect((await api("DELETE", `/v1/keys/${ids[0]}`, undefined, { key: t.key })).status).toBe(200);
    await createKey(t.key);
  }, 60_000);
});

describe("a key made before keys kept their last four characters", () => {
  it("lists with last4 null, as the document says the listing may", async () => {
    const t = await tenant();
    const made = await createKey(t.key, { name: "old" });
    await env.DB.prepare(`UPDATE api_keys SET last4 = NULL WHERE id = ?`).bind(made.key.id).run();
    const list = await api("GET", "/v1/keys", undefined, { key: t.key });
    expect(list.json.data.find((k) => k.id === made.key.id)?.last4).toBeNull();
    const doc = (await api("GET", "/openapi.json")).json as unknown as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
    };
    const page = JSON.stringify(doc.paths["/v1/keys"].get.responses["200"].content["application/json"].schema);
    expect(page).toMatch(
      /"last4":\{"anyOf":\[\{"type":"string"\},\{"type":"null"\}\]\}|"last4":\{"type":\["string","null"\]\}/,
    );
  });
});

describe("expiry and the auth cache's bound", () => {
  it("stop another isolate's cached entry within AUTH_CACHE_MS of revocation, and never later", async () => {
    const t = await tenant();
    // Created over HTTP but never used, so no cache entry exists for it yet.
    const made = await createKey(t.key);
    const hash = await sha256Hex(made.apiKey);
    const t0 = Date.now();
    expect(await keyForHash(env as Env, hash, t0)).toEqual({ tenantId: t.id, keyId: made.key.id });
    // Revoked by another isolate: this one's entry is not dropped, so it holds until its time runs out.
    await env.DB.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`)
      .bind(new Date(t0).toISOString(), made.key.id)
      .run();
    expect(await keyForHash(env as Env, hash, t0 + AUTH_CACHE_MS - 1)).not.toBeNull();
    expect(await keyForHash(env as Env, hash, t0 + AUTH_CACHE_MS)).toBeNull();
  });

  it("serve a key from the colo's cache to a fresh isolate with no D1 read, revoked elsewhere until the bound and never after", async () => {
    const t = await tenant();
    const made = await createKey(t.key);
    const hash = await sha256Hex(made.apiKey);
    const t0 = Date.now();
    expect(await keyForHash(env as Env, hash, t0)).toEqual({ tenantId: t.id, keyId: made.key.id });
    // Revoked in another colo: D1 says so, this colo's Cache API entry does not know.
    await env.DB.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`)
      .bind(new Date(t0).toISOString(), made.key.id)
      .run();
    forgetIsolateKeys();
    const spy = spyD1(env.DB);
    expect(await keyForHash({ ...env, DB: spy.db } as Env, hash, t0 + AUTH_CACHE_MS - 1)).toEqual({
      tenantId: t.id,
      keyId: made.key.id,
    });
    expect(spy.direct).toEqual([]);
    // Copied into the fresh isolate with the colo entry's own deadline, never a new minute.
    expect(await keyForHash({ ...env, DB: spy.db } as Env, hash, t0 + AUTH_CACHE_MS)).toBeNull();
    expect(spy.direct).toHaveLength(1);
  });

  it("refuse a key revoked in this colo at once, in an isolate that never saw the revocation", async () => {
    const t = await tenant();
    const other = await createKey(t.key);
    expect(await works(other.apiKey)).toBe(true);
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    // Another isolate of the same colo: its own map is empty, the shared entry was deleted with the revocation.
    forgetIsolateKeys();
    expect(await keyForHash(env as Env, await sha256Hex(other.apiKey))).toBeNull();
  });

  it("refuse a key revoked in this colo within ISOLATE_RECHECK_MS in another isolate that holds it in memory", async () => {
    const t = await tenant();
    const made = await createKey(t.key);
    const hash = await sha256Hex(made.apiKey);
    const t0 = Date.now();
    // This isolate looked the key up and holds it.
    expect(await keyForHash(env as Env, hash, t0)).toEqual({ tenantId: t.id, keyId: made.key.id });
    // Another isolate of the same colo revokes it: D1, and the colo's layer (its entry deleted, a tombstone left).
    await env.DB.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ?`)
      .bind(new Date(t0).toISOString(), made.key.id)
      .run();
    await revokeEdgeKey(hash, t0 + AUTH_CACHE_MS, t0);
    expect(await keyForHash(env as Env, hash, t0 + ISOLATE_RECHECK_MS - 1)).not.toBeNull();
    expect(await keyForHash(env as Env, hash, t0 + ISOLATE_RECHECK_MS)).toBeNull();
  });

  it("end a key at its expiresAt, even while it is cached", async () => {
    const t = await tenant();
    const expiresAt = new Date(Date.now() + 10_000);
    const made = await createKey(t.key, { name: "temp", expiresAt: expiresAt.toISOString().replace("Z", "+00:00") });
    expect(made.key.expiresAt).toBe(expiresAt.toISOString());
    const hash = await sha256Hex(made.apiKey);
    const t0 = Date.now();
    expect(await keyForHash(env as Env, hash, t0)).not.toBeNull();
    expect(await keyForHash(env as Env, hash, expiresAt.getTime() - 1)).not.toBeNull();
    expect(await keyForHash(env as Env, hash, expiresAt.getTime())).toBeNull();
  });

  it("cache an expired key's refusal as long as an unknown key's: one D1 read, not one per request", async () => {
    const t = await tenant();
    const expiresAt = new Date(Date.now() + 10_000);
    const made = await createKey(t.key, { name: "short", expiresAt: expiresAt.toISOString() });
    const hash = await sha256Hex(made.apiKey);
    forgetIsolateKeys();
    const spy = spyD1(env.DB);
    const later = expiresAt.getTime() + 1;
    for (let i = 0; i < 5; i++) expect(await keyForHash({ ...env, DB: spy.db } as Env, hash, later + i)).toBeNull();
    expect(spy.direct.filter((q) => /api_keys/i.test(q))).toHaveLength(1);
  });
});

/**
 * A D1 binding whose first read of api_keys runs at once but hands its answer back only when
 * `release` is called: `answered` resolves once D1 has been read, so a test can act in between.
 */
function holdKeyRead(real: D1Database) {
  let release!: () => void;
  let answered!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const read = new Promise<void>((r) => (answered = r));
  let held = false;
  const hold = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop === "bind") return (...args: unknown[]) => hold(target.bind(...args));
        if (typeof prop === "string" && ["all", "first", "raw", "run"].includes(prop) && !held) {
          held = true;
          return async (...args: unknown[]) => {
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            answered();
            await released;
            return result;
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare")
        return (q: string) => (/^select\b.*\bapi_keys\b/is.test(q) ? hold(target.prepare(q)) : target.prepare(q));
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db, read, release };
}

describe("a lookup that read D1 before a revocation and ends after it", () => {
  it("is refused, and caches the key neither in the revoking isolate nor in its data center", async () => {
    const t = await tenant();
    const victim = await createKey(t.key);
    const hash = await sha256Hex(victim.apiKey);
    // Never looked up, so the lookup below goes to D1 and sees the key still active.
    const held = holdKeyRead(env.DB);
    const lookup = keyForHash({ ...env, DB: held.db } as Env, hash);
    await held.read;
    expect((await api("DELETE", `/v1/keys/${victim.key.id}`, undefined, { key: t.key })).status).toBe(200);
    held.release();
    expect(await lookup).toBeNull();
    // Nothing it could have written holds: not this isolate's entry, nor the data center's.
    expect(await works(victim.apiKey)).toBe(false);
    forgetIsolateKeys();
    const spy = spyD1(env.DB);
    expect(await keyForHash({ ...env, DB: spy.db } as Env, hash)).toBeNull();
  });

  it("cannot bring the key back in the data center by a late write from another isolate", async () => {
    const t = await tenant();
    const victim = await createKey(t.key);
    const hash = await sha256Hex(victim.apiKey);
    // Another isolate of this colo read D1 just before the revocation, and writes the colo's entry just after it.
    const readAt = Date.now();
    expect((await api("DELETE", `/v1/keys/${victim.key.id}`, undefined, { key: t.key })).status).toBe(200);
    await writeEdgeKey(hash, { key: { tenantId: t.id, keyId: victim.key.id }, until: readAt + AUTH_CACHE_MS }, readAt);
    forgetIsolateKeys();
    expect(await keyForHash(env as Env, hash)).toBeNull();
    expect(await works(victim.apiKey)).toBe(false);
  });
});

/** A tenant, a second key of it and a conversation; a socket the second key opened, and its close code when it closes. */
async function secondKeysSocket() {
  const t = await tenant();
  const other = await createKey(t.key);
  const conv = await createConversation(undefined, t.key);
  const sock = await connectSocket(`/v1/conversations/${conv}/ws`, { authorization: `Bearer ${other.apiKey}` });
  expect(sock.status).toBe(101);
  const closed = new Promise<number>((resolve) => sock.ws!.addEventListener("close", (e) => resolve(e.code)));
  return { t, other, conv, sock, closed };
}

describe("a revoked key's tickets and sockets", () => {
  it("a ticket the key asked for is refused like a used one once the key is revoked", async () => {
    const t = await tenant();
    const other = await createKey(t.key);
    const conv = await createConversation(undefined, other.apiKey);
    const ticket = (await api("POST", `/v1/conversations/${conv}/ws-ticket`, undefined, { key: other.apiKey })).json
      .ticket;
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    const refused = await connectSocket(`/v1/conversations/${conv}/ws?ticket=${ticket}`);
    const never = await connectSocket(`/v1/conversations/${conv}/ws?ticket=wst_${"n".repeat(32)}`);
    expect(refused.status).toBe(401);
    expect(refused.text).toBe(never.text);
  });

  it("a socket the key opened refuses its next turn and closes", async () => {
    const { t, other, conv, sock, closed } = await secondKeysSocket();
    sock.ws!.send(JSON.stringify({ type: "send", content: "before" }));
    await sock.next((e) => e.type === "turn_end");
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    sock.ws!.send(JSON.stringify({ type: "send", content: "after" }));
    const error = await sock.next((e) => e.type === "error");
    expect(error.error.type).toBe("authentication_error");
    expect(await closed).toBe(1008);
    const saved = (await api("GET", `/v1/conversations/${conv}/messages`, undefined, { key: t.key })).json.data;
    expect(saved.filter((m) => m.role === "user").map((m) => m.content[0].text)).toEqual(["before"]);
  });

  it("a socket the key opened is refused a tool_results frame and closed: nothing written, the turn still waits", async () => {
    const { t, other, conv, sock, closed } = await secondKeysSocket();
    const tools = [{ name: "get_weather", input_schema: { type: "object" } }];
    const paused = await api(
      "POST",
      `/v1/conversations/${conv}/messages`,
      { content: `@tool get_weather {"city":"Oslo"}`, tools },
      { key: t.key },
    );
    expect(paused.json.stop_reason).toBe("requires_action");
    const [call] = paused.json.requires_action!.calls;
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    sock.ws!.send(
      JSON.stringify({ type: "tool_results", results: [{ tool_use_id: call.id, content: "from a revoked key" }] }),
    );
    const error = await sock.next((e) => e.type === "error");
    expect(error.error.type).toBe("authentication_error");
    expect(await closed).toBe(1008);
    expect((await api("GET", `/v1/conversations/${conv}/messages`, undefined, { key: t.key })).json.data).toHaveLength(
      2,
    );
    expect((await api("GET", `/v1/conversations/${conv}`, undefined, { key: t.key })).json.requiresAction).toEqual(
      paused.json.requires_action,
    );
    const answered = await api(
      "POST",
      `/v1/conversations/${conv}/tool-results`,
      { results: [{ tool_use_id: call.id, content: "sunny" }] },
      { key: t.key },
    );
    expect(answered.status).toBe(200);
    expect(answered.json.messages[0].content).toEqual([
      { type: "tool_result", tool_use_id: call.id, content: "sunny" },
    ]);
  });

  it("a socket the key opened is refused a stop frame and closed: the turn runs on until a live key stops it", async () => {
    const { t, other, conv, sock, closed } = await secondKeysSocket();
    const turn = api(
      "POST",
      `/v1/conversations/${conv}/messages`,
      { content: "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200" },
      { key: t.key },
    );
    const start = await sock.next((e) => e.type === "turn_start");
    await sock.next((e) => e.type === "delta" && e.turnId === start.turnId);
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    sock.ws!.send(JSON.stringify({ type: "stop", turnId: start.turnId }));
    expect(await closed).toBe(1008);
    expect(sock.events.some((e) => e.type === "stopped")).toBe(false);
    // The held reply is still running: only the live key's stop ends it.
    expect(
      (await api("POST", `/v1/conversations/${conv}/stop`, { turnId: start.turnId }, { key: t.key })).json,
    ).toEqual({ turnId: start.turnId, stopped: true });
    expect((await turn).json.stop_reason).toBe("interrupted");
  });

  it("a socket the key opened hears nothing of another client's turn once the key is revoked: it is closed first", async () => {
    const { t, other, conv, sock, closed } = await secondKeysSocket();
    // Heard while the key is active.
    const before = await api("POST", `/v1/conversations/${conv}/messages`, { content: "before" }, { key: t.key });
    await sock.next((e) => e.type === "turn_end" && e.turnId === before.json.turnId);
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    const after = await api("POST", `/v1/conversations/${conv}/messages`, { content: "after" }, { key: t.key });
    expect(after.status).toBe(200);
    // Whichever comes first: the close, or a frame of the turn that ran after the revocation.
    const first = await Promise.race([
      closed.then((code) => ({ code })),
      sock.next((e) => "turnId" in e && e.turnId === after.json.turnId).then((frame) => ({ frame })),
    ]);
    expect(first).toEqual({ code: 1008 });
    expect(sock.events.filter((e) => "turnId" in e && e.turnId === after.json.turnId)).toEqual([]);
  });
});

describe("a key revoked while a turn streams", () => {
  it("closes the key's socket mid-turn, at the next look (every 5 s), while the turn streams on to its end", async () => {
    const { t, other, conv, sock, closed } = await secondKeysSocket();
    // About 60 deltas, 150 ms apart: the turn streams for some 9 s, past one 5 s look at the key.
    const turn = api(
      "POST",
      `/v1/conversations/${conv}/messages`,
      { content: "Tell me about tides.\n@reply-chars 2000\n@stream-pace 150" },
      { key: t.key },
    );
    const started = await sock.next((e) => e.type === "delta");
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    expect(await closed).toBe(1008);
    const done = await turn;
    expect(done.status).toBe(200);
    expect(done.json.stop_reason).toBe("end_turn");
    // The socket heard the turn begin and never its end.
    expect("turnId" in started && started.turnId).toBe(done.json.turnId);
    expect(sock.events.some((e) => e.type === "turn_end")).toBe(false);
  }, 30_000);
});

describe("a revoked key's socket and the conversation's title", () => {
  it("is closed before a rename is announced, and never hears it; a live key's socket does", async () => {
    const { t, other, conv, sock: revoked, closed } = await secondKeysSocket();
    const live = await connectSocket(`/v1/conversations/${conv}/ws`, { authorization: `Bearer ${t.key}` });
    expect(live.status).toBe(101);
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: t.key })).status).toBe(200);
    expect((await api("PATCH", `/v1/conversations/${conv}`, { title: "Secret plans" }, { key: t.key })).status).toBe(
      200,
    );
    expect(await live.next((e) => e.type === "title_changed")).toMatchObject({ title: "Secret plans", source: "user" });
    expect(await closed).toBe(1008);
    expect(revoked.events.filter((e) => e.type === "title_changed")).toEqual([]);
  });
});

describe("operator keys (admin token)", () => {
  it("create, list and revoke any tenant's keys, including its last one", async () => {
    const t = await tenant();
    const base = `/v1/admin/tenants/${t.id}/keys` as const;
    const made = await api("POST", base, { name: "ops" }, { key: ADMIN });
    expect(made.status).toBe(201);
    expect(await works(made.json.apiKey)).toBe(true);
    const list = await api("GET", base, undefined, { key: ADMIN });
    expect(list.json.data.map((k) => k.name)).toEqual(["ops", "default"]);
    expect(list.json.data[0]).not.toHaveProperty("current");
    expect(list.text).not.toContain(made.json.apiKey);
    for (const k of list.json.data)
      expect((await api("DELETE", `${base}/${k.id}`, undefined, { key: ADMIN })).status).toBe(200);
    expect(await works(t.key)).toBe(false);
    expect(await works(made.json.apiKey)).toBe(false);
  });

  it("judge the bare /v1/admin by the admin token, not as a tenant key", async () => {
    const t = await tenant();
    const bare = await api("GET", "/v1/admin", undefined, { key: ADMIN });
    expect(bare.status).toBe(404);
    expect(bare.json.error?.message).toBe("no route for GET /v1/admin");
    const asTenant = await api("GET", "/v1/admin", undefined, { key: t.key });
    expect(asTenant.status).toBe(401);
    expect(asTenant.json.error?.message).toBe("missing or invalid admin token");
  });

  it("answer an unknown tenant, another tenant's key and a tenant's key as admin token with 404 / 401", async () => {
    const t = await tenant();
    const u = await tenant();
    const uKey = (await api("GET", "/v1/keys", undefined, { key: u.key })).json.data[0].id;
    const missing = await api("GET", `/v1/admin/tenants/ten_${"0".repeat(26)}/keys`, undefined, { key: ADMIN });
    expect(missing.status).toBe(404);
    expect(missing.json.error?.message).toBe("tenant not found");
    const crossed = await api("DELETE", `/v1/admin/tenants/${t.id}/keys/${uKey}`, undefined, { key: ADMIN });
    const ghost = await api("DELETE", `/v1/admin/tenants/${t.id}/keys/key_${"0".repeat(26)}`, undefined, {
      key: ADMIN,
    });
    expect(crossed.status).toBe(404);
    expect(crossed.text).toBe(ghost.text);
    expect(await works(u.key)).toBe(true);
    expect((await api("GET", `/v1/admin/tenants/${t.id}/keys`, undefined, { key: t.key })).status).toBe(401);
  });
});
