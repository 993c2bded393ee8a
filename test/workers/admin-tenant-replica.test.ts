// The operator's keys route of a tenant checks that the tenant exists at the primary, not through
// the request's D1 session: a bookmark from before the tenant was created may start that session on
// a replica that has not seen it yet, and a tenant just created must not be a 404.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sortableId } from "../../core/ids";
import { app } from "../../workers/chat/app";
import { ADMIN, api, newTenantWithId } from "./helpers";
import { laggingReplica } from "./lagging-replica";

async function adminLagging(request: { method: string; path: string; body?: unknown; bookmark: string }) {
  const { method, path, body, bookmark } = request;
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json", "x-d1-bookmark": bookmark },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, DB: laggingReplica(env.DB, "tenants") } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("the operator's keys route of a tenant just created, session on a lagging replica", () => {
  it("finds the tenant at the primary: mints and lists its keys", async () => {
    // A bookmark the operator holds from before the tenant existed.
    const earlier = await newTenantWithId();
    const before = await api("GET", `/v1/admin/tenants/${earlier.tenantId}/keys`, undefined, { key: ADMIN });
    expect(before.status).toBe(200);
    const bookmark = before.headers.get("x-d1-bookmark") ?? "";
    const { tenantId } = await newTenantWithId();
    const path = `/v1/admin/tenants/${tenantId}/keys`;
    const minted = await adminLagging({ method: "POST", path, body: { name: "second" }, bookmark });
    expect(minted.status, JSON.stringify(minted.json)).toBe(201);
    const listed = await adminLagging({ method: "GET", path, bookmark });
    expect(listed.status, JSON.stringify(listed.json)).toBe(200);
    // A tenant that exists nowhere is still a 404.
    const nowhere = `/v1/admin/tenants/${sortableId("ten")}/keys`;
    const none = await adminLagging({ method: "GET", path: nowhere, bookmark });
    expect(none.status).toBe(404);
  });

  it("the cortex move of a tenant just created finds the tenant too (a 400 for the shard, not a 404)", async () => {
    const earlier = await newTenantWithId();
    const before = await api("GET", `/v1/admin/tenants/${earlier.tenantId}/keys`, undefined, { key: ADMIN });
    const bookmark = before.headers.get("x-d1-bookmark") ?? "";
    const { tenantId } = await newTenantWithId();
    const body = { to: "CORTEX_SHARD_99" };
    const moved = await adminLagging({
      method: "POST",
      path: `/v1/admin/cortex/tenants/${tenantId}/move`,
      body,
      bookmark,
    });
    expect(moved.status, JSON.stringify(moved.json)).toBe(400);
    expect(JSON.stringify(moved.json)).toContain("CORTEX_SHARD_99");
  });
});
