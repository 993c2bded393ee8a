// A key's expiresAt is kept to the millisecond: finer digits are refused (a 400 naming it), never
// cut, or a key could be made to end sooner than asked, and one expiring just after its creator
// would pass the creator's check once cut to it.
import { describe, expect, it } from "vitest";
import { ADMIN, api, newTenantWithId } from "./helpers";

const FINE = ["2030-01-01T00:00:00.0009Z", "2030-01-01T00:00:00.1234+05:30", "2030-01-01T00:00:00.123456789Z"];

describe("a key's expiresAt finer than the millisecond", () => {
  it("is a 400 naming expiresAt on the operator's route and the tenant's, and makes nothing", async () => {
    const t = await newTenantWithId();
    for (const expiresAt of FINE) {
      const admin = await api("POST", `/v1/admin/tenants/${t.tenantId}/keys`, { expiresAt }, { key: ADMIN });
      expect(admin.status, `${expiresAt}: ${admin.text}`).toBe(400);
      expect(admin.json.error?.message).toMatch(/^expiresAt: /);
      const own = await api("POST", "/v1/keys", { expiresAt }, { key: t.key });
      expect(own.status, `${expiresAt}: ${own.text}`).toBe(400);
      expect(own.json.error?.message).toMatch(/^expiresAt: /);
    }
    expect((await api("GET", "/v1/keys", undefined, { key: t.key })).json.data).toHaveLength(1);
  });

  it("is refused just past the creator's expiry, not cut to it", async () => {
    const t = await newTenantWithId();
    const ends = "2030-01-01T00:00:00.000Z";
    const parent = await api("POST", `/v1/admin/tenants/${t.tenantId}/keys`, { expiresAt: ends }, { key: ADMIN });
    expect(parent.status).toBe(201);
    const sub = await api("POST", "/v1/keys", { expiresAt: "2030-01-01T00:00:00.0009Z" }, { key: parent.json.apiKey });
    expect(sub.status, sub.text).toBe(400);
    expect(sub.json.error?.message).toMatch(/^expiresAt: /);
  });

  it("up to three fractional digits, with Z or an offset, are kept as the instant asked for", async () => {
    const t = await newTenantWithId();
    for (const [asked, stored] of [
      ["2030-01-01T00:00:00Z", "2030-01-01T00:00:00.000Z"],
      ["2030-01-01T00:00:00.5Z", "2030-01-01T00:00:00.500Z"],
      ["2030-01-01T00:00:00.123+05:30", "2029-12-31T18:30:00.123Z"],
    ]) {
      const r = await api("POST", "/v1/keys", { expiresAt: asked }, { key: t.key });
      expect(r.status, `${asked}: ${r.text}`).toBe(201);
      expect(r.json.key.expiresAt).toBe(stored);
    }
  });
});
