// The typed client's per-request headers against the real app: a caller's header replaces the
// client's default of the same name whatever its case, so fetch never sends both joined.
import { describe, expect, it } from "vitest";
import { createClient } from "../../client";
import { ADMIN, DEV_KEY, worker } from "./helpers";

const seen: Headers[] = [];
const clientFor = (key: string) =>
  createClient({
    baseUrl: "http://chat.test",
    key,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(String(input), init);
      seen.push(new Headers(req.headers));
      return worker().fetch(req);
    }) as typeof fetch,
  });

describe("client.request() headers", () => {
  it("a caller's Authorization header (conventional case) replaces the client's key", async () => {
    const r = await clientFor(DEV_KEY).request("GET /v1/admin/cortex/shards", {
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    expect(seen.at(-1)?.get("authorization")).toBe(`Bearer ${ADMIN}`);
    expect(r.status).toBe(200);
  });

  it("a caller's Content-Type (conventional case) replaces the default", async () => {
    const r = await clientFor(DEV_KEY).request("POST /v1/conversations", {
      body: { title: "x" },
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    expect(seen.at(-1)?.get("content-type")).toBe("application/json; charset=utf-8");
    expect(r.status).toBe(201);
  });
});
