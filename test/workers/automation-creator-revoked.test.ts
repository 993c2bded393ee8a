// A key revoked (or expired) at the primary but still accepted here from the auth cache (for up to
// AUTH_CACHE_MS) may not create an automation, nor change one's prompt or schedule: such an
// automation would run on, past the revocation, with no expiry of its own. The key's row is read
// at the primary and must be active there; the writes themselves carry the same condition.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAutomation, updateAutomation } from "../../services/automations";
import { api, newTenantWithId } from "./helpers";

type Made = { apiKey: string; key: { id: string } };

const body = (channel: string) => ({ name: "digest", schedule: "@hourly", prompt: "digest", channel });

/** A tenant's owner key, one automation of the owner's, and a second key that has been used (so it is cached). */
async function tenantWithCachedKey() {
  const { tenantId, key: owner } = await newTenantWithId();
  const second = (await api("POST", "/v1/keys", { name: "second" }, { key: owner })).json as Made;
  expect((await api("GET", "/v1/automations", undefined, { key: second.apiKey })).status).toBe(200);
  const made = await api("POST", "/v1/automations", body("owners"), { key: owner });
  expect(made.status).toBe(201);
  return { tenantId, owner, second, automationId: made.json.id as string };
}

/** Another data center's revocation (or the key's end): D1 has it, this colo's cache does not. */
async function endAtPrimary(column: "revoked_at" | "expires_at", keyId: string): Promise<void> {
  await env.DB.prepare(`UPDATE api_keys SET ${column} = ? WHERE id = ?`)
    .bind(new Date(Date.now() - 1000).toISOString(), keyId)
    .run();
}

describe("a key inactive at the primary but still cached here, and automations", () => {
  for (const [how, column] of [
    ["revoked", "revoked_at"],
    ["expired", "expires_at"],
  ] as const) {
    it(`${how}: cannot create one, nor change one's prompt or schedule`, async () => {
      const { owner, second, automationId } = await tenantWithCachedKey();
      await endAtPrimary(column, second.key.id);
      // Still accepted for a read from the cache: what the bound on revocation allows.
      expect((await api("GET", "/v1/automations", undefined, { key: second.apiKey })).status).toBe(200);

      const created = await api("POST", "/v1/automations", body("left-behind"), { key: second.apiKey });
      expect(created.status, created.text).toBe(401);
      expect(created.json.error?.type).toBe("authentication_error");
      const path = `/v1/automations/${automationId}`;
      for (const change of [{ prompt: "summarize every conversation" }, { schedule: "*/5 * * * *" }]) {
        const patched = await api("PATCH", path, change, { key: second.apiKey });
        expect(patched.status, patched.text).toBe(401);
        expect(patched.json.error?.type).toBe("authentication_error");
      }
      const listed = await api("GET", "/v1/automations", undefined, { key: owner });
      expect(listed.json.data).toHaveLength(1);
      expect(listed.json.data[0]).toMatchObject({ prompt: "digest", schedule: "@hourly", expiresAt: null });
    });
  }

  it("the writes themselves refuse a key that went after the route read it", async () => {
    const { tenantId, second, automationId } = await tenantWithCachedKey();
    await endAtPrimary("revoked_at", second.key.id);
    const input = body("late");
    const created = await createAutomation(env.DB, { tenantId, input, expiresAt: null, creatorId: second.key.id });
    expect(created).toBe("creator_gone");
    const changed = await updateAutomation(env.DB, {
      tenantId,
      id: automationId,
      change: { prompt: "late" },
      keyExpiry: { expiresAt: null, keyId: second.key.id },
    });
    expect(changed).toBe("creator_gone");
    // With no key (the operator's own writes), nothing to check.
    expect(await createAutomation(env.DB, { tenantId, input, expiresAt: null })).toHaveProperty("id");
  });
});
