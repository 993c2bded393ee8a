// A note's edit compares with, and on a failed index write puts back, the note as the primary holds
// it: a client's bookmark may start the request's D1 session on a replica that has not seen another
// client's rename. A stale title there would leave the tenant's memory map (naming the rename)
// unforgotten after a rename back, and a failed edit would write the stale title back.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routeOf } from "../../services/cortex/routing";
import { sessionDatabase } from "../../services/d1-session-database";
import { updateNote } from "../../services/memory/notes";
import { freeze, frozenReplica } from "./lagging-replica";
import { api, newTenantWithId } from "./helpers";

/** The request's database as the route gets it: a session started at the primary's current bookmark, on the frozen replica. */
async function staleSession(): Promise<D1Database> {
  const at = env.DB.withSession("first-primary");
  await at.prepare("SELECT 1").first();
  const frozen = frozenReplica(env.DB, "memory_notes");
  return sessionDatabase(frozen, frozen.withSession(at.getBookmark() ?? undefined));
}

/** A note titled `title`, seen by the frozen replica, then renamed at the primary by another client. */
async function renamedElsewhere(title: string, renamed: string) {
  const { tenantId, key } = await newTenantWithId();
  const made = await api("POST", "/v1/memory", { title, text: `${title} notes` }, { key });
  expect(made.status).toBe(201);
  const id = made.json.id as string;
  await freeze("memory_notes");
  expect((await api("PATCH", `/v1/memory/${id}`, { title: renamed }, { key })).json.title).toBe(renamed);
  return { tenantId, key, id };
}

describe("a note's edit, compared with the note at the primary", () => {
  it("forgets the memory map when a rename back lands on a replica that has not seen the rename", async () => {
    const { tenantId, id } = await renamedElsewhere("alphaquill", "bravoquill");
    // The map a prompt computed after the rename, naming it.
    await env.DB.prepare("INSERT INTO memory_maps (tenant_id, day, body, created_at) VALUES (?, ?, ?, ?)")
      .bind(tenantId, "2099-01-01", "- topics: bravoquill", new Date().toISOString())
      .run();
    const { note } = await updateNote(
      { ...(env as Env), DB: await staleSession() },
      { tenantId, id, change: { title: "alphaquill" } },
    );
    expect(note?.title).toBe("alphaquill");
    const maps = await env.DB.prepare("SELECT count(*) AS n FROM memory_maps WHERE tenant_id = ?")
      .bind(tenantId)
      .first<{ n: number }>();
    expect(maps?.n).toBe(0);
  });

  it("puts back the title the primary held, not the replica's, when the index write fails", async () => {
    const { tenantId, key, id } = await renamedElsewhere("charliequill", "deltaquill");
    const shard = (await routeOf(env as Env, tenantId)).shard;
    const real = (env as unknown as Record<string, D1Database>)[shard];
    const failing = (db: D1DatabaseSession | D1Database): D1Database =>
      new Proxy(db as D1Database, {
        get(t, p) {
          if (p === "batch") return async () => Promise.reject(new Error("D1_ERROR: shard unavailable"));
          if (p === "withSession") return (b?: string) => failing(real.withSession(b));
          return Reflect.get(t, p).bind(t);
        },
      });
    const edit = updateNote({ ...(env as Env), DB: await staleSession(), [shard]: failing(real) } as Env, {
      tenantId,
      id,
      change: { title: "echoquill" },
    });
    await expect(edit).rejects.toThrow(/shard/);
    expect((await api("GET", `/v1/memory/${id}`, undefined, { key })).json.title).toBe("deltaquill");
  });
});
