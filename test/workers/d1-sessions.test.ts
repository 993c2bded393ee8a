// D1 read replication: every D1 statement of a request runs in one Sessions API session started
// from the client's `x-d1-bookmark` (or unconstrained for reads, at the primary for writes), and
// every answer carries the session's latest bookmark, so a client reads its own writes anywhere.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetIsolateKeys } from "../../services/keys/auth";
import { app } from "../../workers/chat/app";
import { spyD1 } from "./d1-spy";
import { api, newTenant } from "./helpers";
import type { Method, ResponseOf } from "../route-types";

async function call<M extends Method, P extends string>(
  db: D1Database,
  method: M,
  path: P,
  key: string,
  opts: { body?: unknown; bookmark?: string } = {},
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  if (opts.bookmark !== undefined) headers["x-d1-bookmark"] = opts.bookmark;
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    }),
    { ...env, DB: db } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    bookmark: res.headers.get("x-d1-bookmark"),
    json: (await res.json().catch(() => null)) as ResponseOf<M, P>,
  };
}

const BOOKMARK = /^[0-9a-f]+(-[0-9a-f]+)+$/;

describe("D1 sessions and the bookmark header", () => {
  it("run every statement of a route in one session: unconstrained for a read, primary for a write, the client's bookmark when sent; the key lookup at the primary", async () => {
    const key = await newTenant();
    // Authentication (the key lookup, and the local dev tenant's bootstrap once per isolate) reads
    // the raw binding, the primary: never a replica that may lag a revocation or a new key.
    const routeOnly = (qs: string[]) => qs.filter((q) => !/"api_keys"|^insert into "tenants"/.test(q));
    // A cortex route is read in a session of its own at the primary (it is cached on its word).
    const requestSessions = (spy: { sessions: string[] }) => {
      const first = spy.sessions[0];
      return [first, ...spy.sessions.slice(1).filter((s) => s !== "first-primary")];
    };
    // A key never used yet: nothing of it is cached in this colo, so its lookup reads D1.
    forgetIsolateKeys();
    const read = spyD1(env.DB);
    const listed = await call(read.db, "GET", "/v1/memory", key);
    expect(listed.status).toBe(200);
    expect(requestSessions(read)).toEqual(["first-unconstrained"]);
    expect(read.inSession.length).toBeGreaterThan(0);
    expect(read.inSession.filter((q) => /from "api_keys"/.test(q))).toEqual([]);
    expect(read.direct.filter((q) => /from "api_keys"/.test(q))).toHaveLength(1);
    expect(routeOnly(read.direct)).toEqual([]);

    const write = spyD1(env.DB);
    const made = await call(write.db, "POST", "/v1/memory", key, {
      body: { title: "bookmarked", text: "a note written at the primary" },
    });
    expect(made.status, JSON.stringify(made)).toBe(201);
    expect(requestSessions(write)).toEqual(["first-primary"]);
    expect(routeOnly(write.direct)).toEqual([]);
    expect(made.bookmark).toMatch(BOOKMARK);

    const after = spyD1(env.DB);
    const seen = await call(after.db, "GET", `/v1/memory/${made.json.id}`, key, { bookmark: made.bookmark! });
    expect(seen.status).toBe(200);
    expect(requestSessions(after)).toEqual([made.bookmark]);
    expect(routeOnly(after.direct)).toEqual([]);
  });

  it("answer every request with the session's latest bookmark, never older than the one sent", async () => {
    const key = await newTenant();
    const first = await api("POST", "/v1/memory", { title: "one", text: "first write" }, { key });
    const b1 = first.headers.get("x-d1-bookmark")!;
    expect(b1).toMatch(BOOKMARK);
    const second = await api(
      "POST",
      "/v1/memory",
      { title: "two", text: "second write" },
      { key, headers: { "x-d1-bookmark": b1 } },
    );
    const b2 = second.headers.get("x-d1-bookmark")!;
    // Bookmarks are fixed-width hex, so position order is string order; the session never moves back.
    expect(b2 >= b1, `${b1} ${b2}`).toBe(true);
    const read = await api("GET", `/v1/memory/${second.json.id}`, undefined, { key, headers: { "x-d1-bookmark": b2 } });
    expect(read.status).toBe(200);
    expect(read.headers.get("x-d1-bookmark")! >= b2).toBe(true);
  });

  it("refuse a malformed bookmark with a 400 naming the header, before anything is written", async () => {
    const key = await newTenant();
    const before = await api("GET", "/v1/memory", undefined, { key });
    for (const bad of ["not a bookmark", "0000-zz", "x".repeat(300)]) {
      const r = await api(
        "POST",
        "/v1/memory",
        { title: "never", text: "never written" },
        { key, headers: { "x-d1-bookmark": bad } },
      );
      expect(r.status).toBe(400);
      expect(r.json.error).toEqual({ type: "invalid_request", message: expect.stringContaining("x-d1-bookmark") });
    }
    const after = await api("GET", "/v1/memory", undefined, { key });
    expect(after.json.data).toEqual(before.json.data);
  });
});
