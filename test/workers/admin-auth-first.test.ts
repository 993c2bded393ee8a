// The operator's routes check the admin token before anything else of the request's: a wrong or
// missing token is a 401 with no x-d1-bookmark (no session was started), whatever bookmark header
// or query parameter it was sent with, as a key route's refusal is.
import { describe, expect, it } from "vitest";
import { ADMIN, api } from "./helpers";

const WRONG = [
  ["a wrong token", "wrong-token"],
  ["no token", ""],
] as const;

describe("admin routes refuse a wrong or missing token first", () => {
  for (const [what, key] of WRONG) {
    it(`${what}: a 401 carrying no bookmark, before the bookmark header and the query are looked at`, async () => {
      for (const [method, path, body] of [
        ["GET", "/v1/admin/cortex/shards", undefined],
        ["POST", "/v1/admin/tenants", { name: "never" }],
        ["GET", "/v1/admin", undefined],
      ] as const) {
        const plain = await api(method, path, body, { key });
        expect(plain.status, `${method} ${path}: ${plain.text}`).toBe(401);
        expect(plain.json.error?.type).toBe("authentication_error");
        expect(plain.headers.get("x-d1-bookmark"), `${method} ${path}`).toBeNull();
        const badBookmark = await api(method, path, body, { key, headers: { "x-d1-bookmark": "zz" } });
        expect(badBookmark.status, `${method} ${path}: ${badBookmark.text}`).toBe(401);
        const query = await api(method, `${path}?x=1`, body, { key });
        expect(query.status, `${method} ${path}?x=1: ${query.text}`).toBe(401);
        expect(query.headers.get("x-d1-bookmark")).toBeNull();
      }
    });
  }

  it("the right token still gets the bookmark check, the query check and an answer with a bookmark", async () => {
    const ok = await api("GET", "/v1/admin/cortex/shards", undefined, { key: ADMIN });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers.get("x-d1-bookmark")).toBeTruthy();
    const badBookmark = await api("GET", "/v1/admin/cortex/shards", undefined, {
      key: ADMIN,
      headers: { "x-d1-bookmark": "zz" },
    });
    expect(badBookmark.status).toBe(400);
    expect(badBookmark.text).toContain("x-d1-bookmark");
    const query = await api("GET", "/v1/admin/cortex/shards?x=1", undefined, { key: ADMIN });
    expect(query.status).toBe(400);
  });
});
