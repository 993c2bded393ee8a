// A note PATCH cut short after its row was written (here: the tenant's shard route could not be
// read) leaves nothing half-written: the note keeps its old text, and search still finds it.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetRoute } from "../../services/cortex/routing";
import { callWithDb, faultyDb } from "./faulty-d1";
import { api, newTenantWithId } from "./helpers";

describe("a note PATCH whose shard route cannot be read", () => {
  it("answers an error and keeps the note's old text, still found by search", async () => {
    const { tenantId, key } = await newTenantWithId();
    const created = await api("POST", "/v1/memory", { text: "alpha original text" }, { key });
    expect(created.status).toBe(201);
    const id = created.json.id;
    forgetRoute(tenantId);
    const { db, state } = faultyDb(env.DB, (sql) => /cortex_shards/.test(sql));
    const res = await callWithDb(db, {
      method: "PATCH",
      path: `/v1/memory/${id}`,
      key,
      body: JSON.stringify({ text: "bravo replaced text" }),
      headers: { "content-type": "application/json" },
    });
    expect(state.failed).toHaveLength(1);
    expect(res.status).toBe(500);
    const got = await api("GET", `/v1/memory/${id}`, undefined, { key });
    expect(got.json.text).toBe("alpha original text");
    const found = await api("GET", "/v1/search?q=alpha", undefined, { key });
    expect(found.json.data.map((h) => h.id)).toContain(id);
    const bravo = await api("GET", "/v1/search?q=bravo", undefined, { key });
    expect(bravo.json.data).toEqual([]);
  });
});
