import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

describe("a key's expiresAt past year 9999", () => {
  it("is a 400 naming expiresAt, for an offset that moves it past the last instant", async () => {
    const key = await newTenant();
    const r = await api("POST", "/v1/keys", { name: "far", expiresAt: "9999-12-31T23:59:59-23:59" }, { key });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ error: { type: "invalid_request" } });
    expect(r.text).toContain("expiresAt");
    // Nothing was made: the tenant has its first key only.
    expect((await api("GET", "/v1/keys", undefined, { key })).json.data).toHaveLength(1);
  });

  it("accepts the last instant of year 9999, stored in the four-digit form", async () => {
    const key = await newTenant();
    const r = await api("POST", "/v1/keys", { name: "last", expiresAt: "9999-12-31T23:59:59.999Z" }, { key });
    expect(r.status).toBe(201);
    expect(r.json.key.expiresAt).toBe("9999-12-31T23:59:59.999Z");
    // The new key is active by every check: it may make a key of its own that ends no later.
    const child = await api(
      "POST",
      "/v1/keys",
      { name: "child", expiresAt: "9999-12-31T00:00:00Z" },
      { key: r.json.apiKey },
    );
    expect(child.status).toBe(201);
  });
});
