// An automation made (or its prompt or schedule changed) by a short-lived key keeps that key's
// expiry, even when the request's D1 session starts on a replica that has not yet seen the key (a
// client's bookmark may start it anywhere): the key's row is read at the primary. A key whose row
// is gone there is a 401, never an automation that never expires.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../db/schema";
import { app } from "../../workers/chat/app";
import { api, newTenant } from "./helpers";
import { laggingReplica } from "./lagging-replica";

async function callLagging(request: { method: string; path: string; key: string; body: unknown; bookmark: string }) {
  const { method, path, key, body, bookmark } = request;
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-d1-bookmark": bookmark },
      body: JSON.stringify(body),
    }),
    { ...env, DB: laggingReplica(env.DB, "api_keys") } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const automation = (channel: string) => ({ name: "digest", schedule: "@hourly", prompt: "digest", channel });

describe("an automation's creator expiry, read at the primary", () => {
  it("keeps a short-lived key's expiry when it creates or re-prompts one on a lagging replica", async () => {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    expect(made.status).toBe(201);
    const short = made.json.apiKey;
    const bookmark = made.headers.get("x-d1-bookmark") ?? "";
    const created = await callLagging({
      method: "POST",
      path: "/v1/automations",
      key: short,
      body: automation("creator-replica"),
      bookmark,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json.expiresAt).toBe(ends);

    const lasting = await api("POST", "/v1/automations", automation("creator-replica-2"), { key: tenantKey });
    expect(lasting.json.expiresAt).toBeNull();
    const path = `/v1/automations/${lasting.json.id}`;
    const patched = await callLagging({ method: "PATCH", path, key: short, body: { prompt: "y" }, bookmark });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    expect(patched.json.expiresAt).toBe(ends);
  });

  it("refuses a key whose row is gone at the primary (still in the auth cache) with a 401", async () => {
    const tenantKey = await newTenant();
    const ends = new Date(Date.now() + 3_600_000).toISOString();
    const made = await api("POST", "/v1/keys", { name: "short", expiresAt: ends }, { key: tenantKey });
    const short = made.json.apiKey;
    // The auth cache now holds the key for a minute.
    expect((await api("GET", "/v1/automations", undefined, { key: short })).status).toBe(200);
    const lasting = await api("POST", "/v1/automations", automation("creator-gone"), { key: tenantKey });
    await drizzle(env.DB).delete(apiKeys).where(eq(apiKeys.id, made.json.key.id));

    const created = await api("POST", "/v1/automations", automation("creator-gone-2"), { key: short });
    expect(created.status, created.text).toBe(401);
    const patched = await api("PATCH", `/v1/automations/${lasting.json.id}`, { schedule: "@daily" }, { key: short });
    expect(patched.status, patched.text).toBe(401);
    const after = await api("GET", `/v1/automations/${lasting.json.id}`, undefined, { key: tenantKey });
    expect(after.json.schedule).toBe("@hourly");
    expect((await api("GET", "/v1/automations", undefined, { key: tenantKey })).json.data).toHaveLength(1);
  });
});
