// The deployed semantic path with stand-ins of its bindings (fake-vector-bindings.ts, the real
// APIs' shape), on the tenant's D1 cortex shard: the conversation's index outbox writes each new
// message's Workers AI embedding into Vectorize under the tenant's namespace after its shard write,
// before any search, and retries by alarm when the embedding fails; the shard's deletes forget the
// vectors at once; another tenant's vectors never come back, even from an index that ignored
// namespaces; and a page is the reciprocal-rank fusion of the BM25 and the vector rankings.
import { createExecutionContext, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { reciprocalRankFusion } from "../../core/rrf";
import { routeOf, shardDatabase, shardNames } from "../../services/cortex/routing";
import { deleteDocs, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { note } from "../cortex-docs";
import { catchUp, vectorId } from "../../services/semantic/catch-up";
import { FUSION_WEIGHTS } from "../../services/semantic/fusion";
import { cortexFusionFor, semanticPathFor } from "../../services/semantic/select";
import { WORKERS_AI_MODEL } from "../../services/semantic/workers-ai";
import { app } from "../../workers/chat/app";
import { type FakeAi, type FakeVectorize, fakeAi, fakeVectorize } from "./fake-vector-bindings";
import { api, conversationStub, createConversation, eventually, inConversation, newTenantWithId } from "./helpers";

/** The conversation object runs its index outbox (and its purge) with the production bindings. */
async function bindConversation(id: string, bindings: { ai: FakeAi; vectorize: FakeVectorize }) {
  await inConversation(id, async (instance) => {
    instance.env = { ...instance.env, AI: bindings.ai.binding, VECTORIZE: bindings.vectorize.binding };
  });
}

/** A request to the chat worker with the production bindings (the test stack binds neither). */
async function bound(
  bindings: { ai: FakeAi; vectorize: FakeVectorize },
  req: { method: string; path: string; key: string; body?: unknown },
): Promise<{ status: number; json: { id?: string; data?: { id: string; messageId: string | null }[] } }> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${req.path}`, {
      method: req.method,
      headers: { authorization: `Bearer ${req.key}`, "content-type": "application/json" },
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
    }),
    { ...(env as Env), AI: bindings.ai.binding, VECTORIZE: bindings.vectorize.binding },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: res.status === 204 ? {} : await res.json() };
}

const exchange = (u: string, a: string) => [
  { role: "user", text: u },
  { role: "assistant", text: a },
];

let n = 0;
/** A real cortex shard (a D1 database), as cortexFor hands the cortex functions. */
const inShard = <T>(fn: (db: D1Database) => Promise<T>) => fn(shardDatabase(env, shardNames(env)[n++ % 2]));
const embeddedCount = async (tenantId: string) => {
  const db = shardDatabase(env, (await routeOf(env as Env, tenantId)).shard);
  return (await db
    .prepare(`SELECT COUNT(*) AS n FROM cortex_embedded WHERE tenant_id = ?`)
    .bind(tenantId)
    .first<number>("n"))!;
};

describe("semantic path (deployed bindings, D1 shard)", () => {
  it("the index outbox writes each new message's vector under the tenant's namespace, before any search", async () => {
    const { tenantId, key } = await newTenantWithId();
    const bindings = { ai: fakeAi(), vectorize: fakeVectorize() };
    const { ai, vectorize } = bindings;
    const id = await createConversation(undefined, key);
    await bindConversation(id, bindings);
    const r = await api(
      "POST",
      `/v1/conversations/${id}/import`,
      { messages: [...exchange("We painted the kitchen sage green.", "Nice shade!")] },
      { key },
    );
    expect(r.status).toBe(201);
    await eventually(async () => vectorize.vectors.size === 2);
    expect(vectorize.queries).toBe(0);
    for (const v of vectorize.vectors.values()) {
      expect(v.namespace).toBe(tenantId);
      expect(v.metadata).toEqual({ tenant: tenantId });
      expect(v.values).toHaveLength(1024);
    }
    expect(ai.calls.map((c) => c.model)).toEqual([WORKERS_AI_MODEL]);
    expect(ai.calls[0].texts.sort()).toEqual(["Nice shade!", "We painted the kitchen sage green."]);
    // The shard records which documents have a vector: the next search's catch-up embeds nothing again.
    expect(await embeddedCount(tenantId)).toBe(2);

    // A later exchange embeds only the new messages.
    await api(
      "POST",
      `/v1/conversations/${id}/import`,
      { messages: exchange("Flight on Monday.", "Safe trip.") },
      { key },
    );
    await eventually(async () => vectorize.vectors.size === 4);
    expect(ai.calls.flatMap((c) => c.texts)).toHaveLength(4);

    // The search fuses the vector ranking in: "colours" is in no message, its concept is.
    const found = await bound(bindings, { method: "GET", path: "/v1/search?q=which%20colours", key });
    expect(found.status).toBe(200);
    expect(found.json.data?.[0].messageId).toBe(r.json.messages[0].id);
    expect(ai.calls.flatMap((c) => c.texts)).toHaveLength(5); // the query only

    // Deleting the conversation forgets its vectors, in the shard's purge.
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    await eventually(async () => vectorize.vectors.size === 0);
    expect(vectorize.deleted).toHaveLength(4);
    expect(await embeddedCount(tenantId)).toBe(0);
  });

  it("an embedding that fails is retried by the outbox's alarm", async () => {
    const { tenantId, key } = await newTenantWithId();
    const ai = fakeAi();
    const run = ai.binding.run.bind(ai.binding);
    let failed = false;
    (ai.binding as { run: unknown }).run = async (...args: Parameters<Ai["run"]>) => {
      if (!failed) {
        failed = true;
        throw new Error("Workers AI: 503");
      }
      return run(...args);
    };
    const bindings = { ai, vectorize: fakeVectorize() };
    const id = await createConversation(undefined, key);
    await bindConversation(id, bindings);
    const r = await api(
      "POST",
      `/v1/conversations/${id}/import`,
      { messages: exchange("Flight on Monday.", "Safe trip.") },
      { key },
    );
    expect(r.status).toBe(201);
    await eventually(async () => failed);
    expect(bindings.vectorize.vectors.size).toBe(0);
    expect(await embeddedCount(tenantId)).toBe(0);
    // The messages are in the shard all the same; the alarm's run writes the vectors.
    expect(await runDurableObjectAlarm(conversationStub(id))).toBe(true);
    await eventually(async () => bindings.vectorize.vectors.size === 2);
    expect(await embeddedCount(tenantId)).toBe(2);
  });

  it("a deleted note's vector goes with it", async () => {
    const { key } = await newTenantWithId();
    const bindings = { ai: fakeAi(), vectorize: fakeVectorize() };
    const { vectorize } = bindings;
    const saved = await bound(bindings, {
      method: "POST",
      path: "/v1/memory",
      key,
      body: { text: "Guitar lessons on Thursdays." },
    });
    expect(saved.status).toBe(201);
    // Notes are written outside a conversation's outbox: the search's catch-up embeds them.
    expect((await bound(bindings, { method: "GET", path: "/v1/search?q=music", key })).status).toBe(200);
    expect(vectorize.vectors.size).toBe(1);
    expect((await bound(bindings, { method: "DELETE", path: `/v1/memory/${saved.json.id}`, key })).status).toBe(204);
    expect(vectorize.vectors.size).toBe(0);
    expect(vectorize.deleted).toHaveLength(1);
  });

  it("never returns another tenant's documents, even from an index that ignores namespaces", async () => {
    for (const ignoreNamespaces of [false, true]) {
      await inShard(async (db) => {
        const [a, b] = [`ten_a${Date.now()}${n++}`, `ten_b${Date.now()}${n++}`];
        const bindings = { AI: fakeAi().binding, VECTORIZE: fakeVectorize({ ignoreNamespaces }).binding };
        await upsertDocs(db, [
          note(a, "mine", "Weekend on the ridge trail."),
          note(b, "theirs", "Hiking boots and mountain hikes."),
        ]);
        const path = semanticPathFor(bindings, db)!;
        expect(path.mode).toBe("deployed");
        await catchUp({ db, path, tenantId: a });
        await catchUp({ db, path, tenantId: b });
        const search = async (t: string) =>
          (await searchCortexPage(db, t, { q: "hiking", limit: 10, fusion: cortexFusionFor(bindings, db) })).hits.map(
            (h) => h.id,
          );
        expect(await search(a)).toEqual(["mine"]);
        expect(await search(b)).toEqual(["theirs"]);
      });
    }
  });

  it("orders a page by reciprocal-rank fusion of the BM25 and the vector rankings", async () => {
    await inShard(async (db) => {
      const t = `ten_fusion${Date.now()}${n++}`;
      const bindings = { AI: fakeAi().binding, VECTORIZE: fakeVectorize().binding };
      await upsertDocs(db, [
        note(t, "a", "The invoice invoice for the trip."),
        note(t, "b", "Invoice paid: bill, payment, paid."),
        note(t, "c", "The bill came; payment done."),
        note(t, "d", "Gardening on Sunday."),
      ]);
      const lexical = (await searchCortexPage(db, t, { q: "invoice", limit: 10 })).hits.map((h) => h.id);
      const fused = (await searchCortexPage(db, t, { q: "invoice", limit: 10, fusion: cortexFusionFor(bindings, db) }))
        .hits;
      // The vector ranking alone, as the fake index ranks it for this tenant.
      const path = semanticPathFor(bindings, db)!;
      const [q] = await path.embedder.embed(["invoice"]);
      const byVec = new Map(
        (
          await db
            .prepare(
              `SELECT e.vec_id AS v, d.ref_id AS id FROM cortex_embedded e JOIN cortex_docs d ON d.doc_id = e.doc_id WHERE e.tenant_id = ?`,
            )
            .bind(t)
            .all<{ v: string; id: string }>()
        ).results.map((r) => [r.v, r.id]),
      );
      const vector = (await path.index.query(t, q, 10)).filter((m) => m.score > 0.05).map((m) => byVec.get(m.id)!);
      expect(lexical).toEqual(["a", "b"]);
      expect(vector.slice(0, 3).sort()).toEqual(["a", "b", "c"]);
      const expected = reciprocalRankFusion([lexical, vector], { weights: [...FUSION_WEIGHTS] }).map((f) => f.id);
      expect(fused.map((h) => h.id).slice(0, 3)).toEqual(expected.slice(0, 3));
      // A document only the vectors found is on the page.
      expect(fused.map((h) => h.id)).toContain("c");
    });
  });
});

describe("a catch-up's claims", () => {
  /** A Workers AI stand-in that holds its first call until `release` (the outbox's sync, slow). */
  function heldAi() {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const inside = new Promise<void>((r) => (reached = r));
    const ai = fakeAi();
    const run = ai.binding.run.bind(ai.binding) as (model: string, inputs: { text: string[] }) => Promise<unknown>;
    const binding = {
      run: async (model: string, inputs: { text: string[] }) => {
        reached();
        await gate;
        return run(model, inputs);
      },
    } as unknown as Ai;
    return { binding, calls: ai.calls, release, inside };
  }
  /** A document's id by its ref. */
  const docIdOf = async (db: D1Database, t: string, ref: string) =>
    (await db
      .prepare(`SELECT doc_id AS d FROM cortex_docs WHERE tenant_id = ? AND ref_id = ?`)
      .bind(t, ref)
      .first<{ d: string }>())!.d;
  /** One catch-up of tenant `t` with these Workers AI and Vectorize bindings. */
  const catchUpWith = (db: D1Database, t: string, bindings: { ai: Ai; vectorize: FakeVectorize }) =>
    catchUp({
      db,
      path: semanticPathFor({ AI: bindings.ai, VECTORIZE: bindings.vectorize.binding }, db)!,
      tenantId: t,
    });
  const rowsOf = async (db: D1Database, t: string) =>
    (await db.prepare(`SELECT vec_id AS v FROM cortex_embedded WHERE tenant_id = ?`).bind(t).all<{ v: string }>())
      .results;

  it("a catch-up beside one already embedding skips its documents; each is embedded once", async () => {
    await inShard(async (db) => {
      const t = `ten_claims${Date.now()}${n++}`;
      await upsertDocs(
        db,
        Array.from({ length: 12 }, (_, i) => note(t, `${t}-k${i}`, `kite note ${i}`)),
      );
      const slow = heldAi();
      const quick = fakeAi();
      const vectorize = fakeVectorize();
      const pathOf = (ai: Ai) => semanticPathFor({ AI: ai, VECTORIZE: vectorize.binding }, db)!;
      const first = catchUp({ db, path: pathOf(slow.binding), tenantId: t });
      await slow.inside;
      // The second (a search's) finds every document claimed: it embeds nothing.
      expect(await catchUp({ db, path: pathOf(quick.binding), tenantId: t })).toBe(0);
      expect(quick.calls).toEqual([]);
      slow.release();
      expect(await first).toBe(12);
      expect(slow.calls.flatMap((c) => c.texts)).toHaveLength(12);
      const rows = await rowsOf(db, t);
      expect(rows).toHaveLength(12);
      expect(rows.some((r) => r.v.startsWith("claim:"))).toBe(false);
      expect(vectorize.vectors.size).toBe(12);
    });
  });

  it("a document changed while its vector is made is embedded again; one deleted meanwhile leaves no vector", async () => {
    await inShard(async (db) => {
      const t = `ten_claims${Date.now()}${n++}`;
      const [kept, changed, deleted] = ["kept", "changed", "deleted"].map((k) => `${t}-${k}`);
      await upsertDocs(db, [
        note(t, kept, "kite kept"),
        note(t, changed, "kite before"),
        note(t, deleted, "kite deleted"),
      ]);
      const [keptDoc, changedDoc, deletedDoc] = await Promise.all(
        [kept, changed, deleted].map((ref) => docIdOf(db, t, ref)),
      );
      const slow = heldAi();
      const vectorize = fakeVectorize();
      const first = catchUpWith(db, t, { ai: slow.binding, vectorize });
      await slow.inside;
      // While the first catch-up embeds the old bodies: one document is edited, one deleted.
      await upsertDocs(db, [note(t, changed, "kite after")]);
      await deleteDocs(db, t, { kind: "memory", refId: deleted });
      slow.release();
      expect(await first).toBe(3);
      // Only the untouched document is marked embedded, and the deleted one's vector is gone again.
      expect(await rowsOf(db, t)).toEqual([{ v: await vectorId(t, keptDoc) }]);
      expect(vectorize.vectors.has(await vectorId(t, deletedDoc))).toBe(false);
      // The next catch-up embeds the edited document's new body, and only it.
      const ai = fakeAi();
      expect(await catchUpWith(db, t, { ai: ai.binding, vectorize })).toBe(1);
      expect(ai.calls.flatMap((c) => c.texts)).toEqual(["kite after"]);
      expect([...vectorize.vectors.keys()].sort()).toEqual(
        (await Promise.all([keptDoc, changedDoc].map((d) => vectorId(t, d)))).sort(),
      );
    });
  });

  it("a whole batch of 100 deleted while embedded leaves no vector (one bound list, under D1's 100 parameters)", async () => {
    await inShard(async (db) => {
      const t = `ten_claims${Date.now()}${n++}`;
      await upsertDocs(
        db,
        Array.from({ length: 100 }, (_, i) => note(t, `${t}-k${i}`, `kite note ${i}`)),
      );
      const slow = heldAi();
      const vectorize = fakeVectorize();
      const first = catchUpWith(db, t, { ai: slow.binding, vectorize });
      await slow.inside;
      await db.prepare(`DELETE FROM cortex_docs WHERE tenant_id = ?`).bind(t).run();
      slow.release();
      await first;
      expect(vectorize.vectors.size).toBe(0);
    });
  });

  it("a failed embedding gives its claims back at once; a claim left by a catch-up that died is taken after it expires", async () => {
    await inShard(async (db) => {
      const t = `ten_claims${Date.now()}${n++}`;
      // Ref ids are unique in a shard, as real ones (ULIDs) are.
      await upsertDocs(db, [note(t, `${t}-a`, "first kite"), note(t, `${t}-b`, "second kite")]);
      const vectorize = fakeVectorize();
      const failing = { run: async () => Promise.reject(new Error("injected: AI down")) } as unknown as Ai;
      const down = semanticPathFor({ AI: failing, VECTORIZE: vectorize.binding }, db)!;
      await expect(catchUp({ db, path: down, tenantId: t })).rejects.toThrow(/AI down/);
      expect(await rowsOf(db, t)).toEqual([]);
      // A dead catch-up's claim (old) and a live one's (now): only the dead one is taken over.
      const claimOf = (ms: number) => `claim:${String(ms).padStart(15, "0")}`;
      const put = db.prepare(`INSERT INTO cortex_embedded (doc_id, tenant_id, vec_id) VALUES (?, ?, ?)`);
      await db.batch([
        put.bind(await docIdOf(db, t, `${t}-a`), t, claimOf(Date.now() - 10 * 60_000)),
        put.bind(await docIdOf(db, t, `${t}-b`), t, claimOf(Date.now())),
      ]);
      const ai = fakeAi();
      expect(await catchUpWith(db, t, { ai: ai.binding, vectorize })).toBe(1);
      expect(ai.calls.flatMap((c) => c.texts)).toEqual(["first kite"]);
    });
  });
});
