// Deletes racing the writes that would keep what they removed: each test forces the interleaving
// by wrapping a binding (D1 or R2) so the delete lands at the one moment it could go wrong — between
// a read and the write it feeds — and checks nothing the delete removed comes back.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDuePage, deleteAutomation } from "../../services/automations";
import { memoryMapFor, utcDay } from "../../services/memory/memory-map";
import { createAutomation } from "./automation-helpers";
import { api, createConversation, newTenant, newTenantWithId } from "./helpers";

type Bindings = { DB: D1Database; BUCKET: R2Bucket };

/** Puts `value` in place of the binding the routes read, for the length of `fn`. */
async function withBinding<K extends keyof Bindings, T>(name: K, value: Bindings[K], fn: () => Promise<T>): Promise<T> {
  const live = env as unknown as Bindings;
  const real = live[name];
  live[name] = value;
  try {
    return await fn();
  } finally {
    live[name] = real;
  }
}

/** `real`, whose method `method` first awaits `before` (once) and then does what it does. */
function firstCallWaits<T extends object>(real: T, at: { method: string; before: () => Promise<void> }): T {
  let done = false;
  return new Proxy(real, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop !== at.method || done) return value.bind(target);
      return async (...args: unknown[]) => {
        if (!done) {
          done = true;
          await at.before();
        }
        return value.apply(target, args);
      };
    },
  });
}

/** A D1 binding whose statement matching `runs` waits for `before` (once) when it is run. */
function d1RunWaits(
  real: D1Database,
  at: { runs: (sql: string, args: unknown[]) => boolean; before: () => Promise<void> },
) {
  let done = false;
  const hooked = (statement: D1PreparedStatement, sql: string, args: unknown[]): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (prop === "bind") return (...bound: unknown[]) => hooked(target.bind(...bound), sql, bound);
        if (typeof value !== "function") return value;
        if (prop !== "run" || done || !at.runs(sql, args)) return value.bind(target);
        return async () => {
          done = true;
          await at.before();
          return target.run();
        };
      },
    });
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => hooked(target.prepare(sql), sql, []);
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("deletes racing the writes that would keep what they removed", () => {
  it("a memory map computed before a conversation's delete is not stored after it (its title leaves every prompt)", async () => {
    const { tenantId, key } = await newTenantWithId();
    const gone = await createConversation(undefined, key);
    expect((await api("PATCH", `/v1/conversations/${gone}`, { title: "Quuxolith merger talks" }, { key })).status).toBe(
      200,
    );
    // The map's titles are read; the delete (and its forget) lands before the map is stored.
    let deleted = 0;
    const db = d1RunWaits(env.DB, {
      runs: (sql, args) =>
        /INSERT INTO memory_maps/i.test(sql) && args.some((a) => String(a).startsWith("<memory_map")),
      before: async () => {
        deleted = (await api("DELETE", `/v1/conversations/${gone}`, undefined, { key })).status;
      },
    });
    await memoryMapFor(db, tenantId, utcDay());
    expect(deleted).toBe(204);
    expect(await memoryMapFor(env.DB, tenantId, utcDay())).not.toContain("quuxolith");
    const other = await createConversation(undefined, key);
    const system = (await api("GET", `/v1/conversations/${other}/replay`, undefined, { key })).json.system[0].text;
    expect(system).toContain("<memory_map");
    expect(system).not.toContain("quuxolith");
  });

  it("a channel's PATCH after its conversation was deleted names no conversation, in its answer or the listing", async () => {
    const key = await newTenant();
    const first = await api("POST", "/v1/channels/patched-after-delete/messages", { content: "hello" }, { key });
    expect(first.status).toBe(200);
    const conversationId = first.json.conversationId;
    expect((await api("DELETE", `/v1/conversations/${conversationId}`, undefined, { key })).status).toBe(204);
    const patched = await api("PATCH", "/v1/channels/patched-after-delete", { rotationSeconds: 600 }, { key });
    expect(patched.status).toBe(200);
    expect(patched.json).toMatchObject({ conversationId: null, rotationSeconds: 600 });
    const listed = (await api("GET", "/v1/channels?limit=100", undefined, { key })).json.data;
    expect(listed.find((c) => c.name === "patched-after-delete")).toMatchObject({
      conversationId: null,
      rotationSeconds: 600,
    });
    expect((await api("GET", "/v1/channels/patched-after-delete", undefined, { key })).json.conversationId).toBeNull();
    // The next message still starts a new conversation there.
    const next = await api("POST", "/v1/channels/patched-after-delete/messages", { content: "again" }, { key });
    expect(next.status).toBe(200);
    expect(next.json.conversationId).not.toBe(conversationId);
  });

  it("a multipart upload started while its conversation is deleted is a 404 and leaves no row or open upload", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    let deleted = 0;
    let uploadId = "";
    let r2Key = "";
    const bucket = firstCallWaits(env.BUCKET, {
      method: "createMultipartUpload",
      before: async () => {
        deleted = (await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status;
      },
    });
    const watched = new Proxy(bucket, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (prop !== "createMultipartUpload" || typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const upload = (await value.apply(target, args)) as R2MultipartUpload;
          uploadId = upload.uploadId;
          r2Key = upload.key;
          return upload;
        };
      },
    });
    const started = await withBinding("BUCKET", watched, () =>
      api("POST", `/v1/conversations/${id}/attachments/uploads`, { name: "late.bin" }, { key }),
    );
    expect(deleted).toBe(204);
    expect(started.status).toBe(404);
    const rows = await env.DB.prepare(`SELECT id FROM attachments WHERE conversation_id = ?`).bind(id).all();
    expect(rows.results).toEqual([]);
    // The upload was aborted: a part can no longer be sent to it.
    expect(uploadId).not.toBe("");
    await expect(env.BUCKET.resumeMultipartUpload(r2Key, uploadId).uploadPart(1, new Uint8Array(8))).rejects.toThrow();
  });

  it("a tick's claim does not record a run of an automation deleted after the tick read it", async () => {
    const at = Date.parse("2037-07-07T14:01:00Z");
    const key = await newTenant();
    const id = await createAutomation(key, { channel: "deleted-mid-claim" });
    const { tenantId } = (await env.DB.prepare(`SELECT tenant_id AS tenantId FROM automations WHERE id = ?`)
      .bind(id)
      .first<{ tenantId: string }>())!;
    let removed = false;
    const db = firstCallWaits(env.DB, {
      method: "batch",
      before: async () => {
        removed = await deleteAutomation(env.DB, tenantId, id);
      },
    });
    const work = await claimDuePage(db, at);
    expect(removed).toBe(true);
    const runs = await env.DB.prepare(`SELECT id FROM automation_runs WHERE automation_id = ?`).bind(id).all();
    expect(runs.results).toEqual([]);
    // Counted as it happened: no job for the run that was not recorded.
    expect(work.jobs).toHaveLength(work.claimed);
    const jobRuns = work.jobs.map((j) => j.runId);
    if (jobRuns.length) {
      const recorded = await env.DB.prepare(
        `SELECT id FROM automation_runs WHERE id IN (${jobRuns.map(() => "?").join(",")})`,
      )
        .bind(...jobRuns)
        .all();
      expect(recorded.results).toHaveLength(jobRuns.length);
    }
  });
});
