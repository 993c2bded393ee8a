// A note edited and then deleted before any search re-embedded it: its vector (made of the old
// text) is forgotten with it, in the deployed index and in the local path's SQLite alike. The edit
// marks the document's vector stale rather than dropping the mark (d1-migrations/cortex-shard/
// 0005_stale_vectors.sql), so the delete still knows which vector to tombstone.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routeOf, shardDatabase, shardNames } from "../../services/cortex/routing";
import { deleteDocs, upsertDocs } from "../../services/cortex/search-index";
import { catchUp, forgetGone, vectorId } from "../../services/semantic/catch-up";
import { semanticPathFor } from "../../services/semantic/select";
import { note } from "../cortex-docs";
import { callWith } from "./app-with-vars";
import { type FakeVectorize, fakeAi, fakeVectorize } from "./fake-vector-bindings";
import { newTenantWithId } from "./helpers";

/** Creates a note, searches (embeds it), edits it, deletes it, searches again; returns `count()` at the end. */
async function editThenDelete(vars: Record<string, unknown>, run: { key: string; count: () => Promise<number> }) {
  const { key, count } = run;
  const created = await callWith(vars, {
    method: "POST",
    path: "/v1/memory",
    key,
    body: { text: "Guitar lessons on Thursdays." },
  });
  expect(created.status).toBe(201);
  const id = (created.json as { id: string }).id;
  expect((await callWith(vars, { method: "GET", path: "/v1/search?q=music", key })).status).toBe(200);
  expect(await count()).toBe(1);
  const patched = await callWith(vars, {
    method: "PATCH",
    path: `/v1/memory/${id}`,
    key,
    body: { text: "Piano lessons on Fridays now." },
  });
  expect(patched.status).toBe(200);
  expect((await callWith(vars, { method: "DELETE", path: `/v1/memory/${id}`, key })).status).toBe(204);
  expect((await callWith(vars, { method: "GET", path: "/v1/search?q=music", key })).status).toBe(200);
  return count();
}

describe("a note edited, then deleted before a search re-embedded it", () => {
  it("leaves no vector in the deployed index", async () => {
    const { key } = await newTenantWithId();
    const bindings = { ai: fakeAi(), vectorize: fakeVectorize() };
    const vars = { AI: bindings.ai.binding, VECTORIZE: bindings.vectorize.binding };
    expect(await editThenDelete(vars, { key, count: async () => bindings.vectorize.vectors.size })).toBe(0);
  });

  it("leaves no vector in the local path's SQLite", async () => {
    const { tenantId, key } = await newTenantWithId();
    const count = async () => {
      const db = shardDatabase(env, (await routeOf(env as Env, tenantId)).shard);
      return (await db
        .prepare(`SELECT COUNT(*) AS n FROM local_vectors WHERE tenant_id = ?`)
        .bind(tenantId)
        .first<number>("n"))!;
    };
    expect(await editThenDelete({ SEMANTIC_SEARCH: "local" }, { key, count })).toBe(0);
  });
});

describe("a stale vector's catch-up", () => {
  let n = 0;
  /** A tenant in a real cortex shard with one note, embedded once and then edited (its vector stale). */
  async function staleNote() {
    const db = shardDatabase(env, shardNames(env)[n % 2]);
    const t = `ten_stale${Date.now()}${n++}`;
    const vectorize = fakeVectorize();
    await upsertDocs(db, [note(t, "n1", "Guitar lessons on Thursdays.")]);
    expect(await catchUpWith(db, t, { ai: fakeAi().binding, vectorize })).toBe(1);
    await upsertDocs(db, [note(t, "n1", "Piano lessons on Fridays now.")]);
    const docId = (await db
      .prepare(`SELECT doc_id AS d FROM cortex_docs WHERE tenant_id = ?`)
      .bind(t)
      .first<string>("d"))!;
    const vec = await vectorId(t, docId);
    expect(vectorize.vectors.has(vec)).toBe(true);
    return { db, t, vectorize, docId, vec };
  }
  const catchUpWith = (db: D1Database, t: string, bindings: { ai: Ai; vectorize: FakeVectorize }) =>
    catchUp({
      db,
      path: semanticPathFor({ AI: bindings.ai, VECTORIZE: bindings.vectorize.binding }, db)!,
      tenantId: t,
    });
  const forget = (db: D1Database, t: string, vectorize: FakeVectorize) =>
    forgetGone(db, semanticPathFor({ AI: fakeAi().binding, VECTORIZE: vectorize.binding }, db)!, t);

  it("that fails gives the stale mark back, so a delete still forgets the old vector", async () => {
    const { db, t, vectorize, vec } = await staleNote();
    const failing = { run: async () => Promise.reject(new Error("Workers AI: 503")) } as unknown as Ai;
    await expect(catchUpWith(db, t, { ai: failing, vectorize })).rejects.toThrow("503");
    await deleteDocs(db, t, { kind: "memory", refId: "n1" });
    await forget(db, t, vectorize);
    expect(vectorize.vectors.has(vec)).toBe(false);
  });

  it("whose document is edited again meanwhile, then deleted, leaves no vector", async () => {
    const { db, t, vectorize, vec } = await staleNote();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const inside = new Promise<void>((r) => (reached = r));
    const run = fakeAi().binding.run as (model: string, inputs: { text: string[] }) => Promise<unknown>;
    const held = {
      run: async (model: string, inputs: { text: string[] }) => {
        reached();
        await gate;
        return run(model, inputs);
      },
    } as unknown as Ai;
    const first = catchUpWith(db, t, { ai: held, vectorize });
    await inside;
    await upsertDocs(db, [note(t, "n1", "Violin practice on Saturdays.")]);
    release();
    expect(await first).toBe(1);
    await deleteDocs(db, t, { kind: "memory", refId: "n1" });
    await forget(db, t, vectorize);
    expect(vectorize.vectors.has(vec)).toBe(false);
  });

  it("left claimed by a catch-up that died: a delete forgets the document's vector", async () => {
    const { db, t, vectorize, docId, vec } = await staleNote();
    // A catch-up took the stale row over and died: its claim is all the row says.
    await db.prepare(`UPDATE cortex_embedded SET vec_id = 'claim:000000000000001' WHERE doc_id = ?`).bind(docId).run();
    await deleteDocs(db, t, { kind: "memory", refId: "n1" });
    await forget(db, t, vectorize);
    expect(vectorize.vectors.has(vec)).toBe(false);
  });
});
