// README.md's key rotation recipe ("Rotation is create + revoke"), run as printed on a tenant's
// first key: the new key made with the recipe's body (test/fixtures/readme-rotation.ts, which the
// unit test readme-rotation.test.ts matches against the README), the old key found in the listing
// and revoked with the new one.
import { describe, expect, it } from "vitest";
import { ROTATION_NEW_KEY } from "../fixtures/readme-rotation";
import { api, newTenant } from "./helpers";

interface ListedKey {
  id: string;
  current: boolean;
  expiresAt: string | null;
}

describe("README's key rotation recipe on a tenant's first key", () => {
  it("creates, finds and revokes: the old key then answers 401 and the new one works", async () => {
    const oldKey = await newTenant();
    // 1. a new key
    const made = await api("POST", "/v1/keys", ROTATION_NEW_KEY, { key: oldKey });
    expect(made.status, made.text).toBe(201);
    const newKey = String(made.json.apiKey);
    // 2. the old key's id: the one the new key's listing does not mark current
    const listed = await api("GET", "/v1/keys", undefined, { key: newKey });
    expect(listed.status).toBe(200);
    const old = (listed.json.data as ListedKey[]).filter((k) => !k.current);
    expect(old).toHaveLength(1);
    expect(old[0]!.expiresAt).toBeNull();
    // 3. revoke it
    const revoked = await api("DELETE", `/v1/keys/${old[0]!.id}`, undefined, { key: newKey });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await api("GET", "/v1/keys", undefined, { key: oldKey })).status).toBe(401);
    expect((await api("GET", "/v1/keys", undefined, { key: newKey })).status).toBe(200);
  });

  it("is refused at step 3 when the new key expires, as the README warns", async () => {
    const oldKey = await newTenant();
    const made = await api(
      "POST",
      "/v1/keys",
      { ...ROTATION_NEW_KEY, expiresAt: "2030-01-01T00:00:00Z" },
      { key: oldKey },
    );
    expect(made.status, made.text).toBe(201);
    const newKey = String(made.json.apiKey);
    const old = ((await api("GET", "/v1/keys", undefined, { key: newKey })).json.data as ListedKey[]).find(
      (k) => !k.current,
    )!;
    const revoked = await api("DELETE", `/v1/keys/${old.id}`, undefined, { key: newKey });
    expect(revoked.status).toBe(409);
    expect(revoked.json.error?.type).toBe("conflict");
  });
});
