// The deployed semantic path with stand-ins of its bindings (fake-vector-bindings.ts, the real
// APIs' shape): the index outbox writes each new message's Workers AI embedding into Vectorize
// under the tenant's namespace before any search; deletes forget the vectors at once; another
// tenant's vectors never come back, even from an index that ignored namespaces; and a page is the
// reciprocal-rank fusion of the BM25 and the vector rankings.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { reciprocalRankFusion } from "../../core/rrf";
import { searchCortexPage, upsertDocs, type CortexDoc } from "../../services/cortex";
import { defaultShard } from "../../services/cortex/routing";
import { d1OverDurableSql } from "../../services/cortex/sql-adapter";
import { catchUp } from "../../services/semantic/catch-up";
import { FUSION_WEIGHTS } from "../../services/semantic/fusion";
import { cortexFusionFor, semanticPathFor } from "../../services/semantic/select";
import { WORKERS_AI_MODEL } from "../../services/semantic/workers-ai";
import { type FakeAi, type FakeVectorize, fakeAi, fakeVectorize } from "./fake-vector-bindings";
import { api, createConversation, eventually, newTenantWithId } from "./helpers";

type Instance = { env: Record<string, unknown> };
const inStub = <T>(stub: DurableObjectStub, fn: (instance: Instance, state: DurableObjectState) => Promise<T>) =>
  (
    runInDurableObject as unknown as (
      stub: unknown,
      f: (instance: Instance, state: DurableObjectState) => Promise<T>,
    ) => Promise<T>
  )(stub, fn);

/** The tenant's cortex shard runs with these bindings, as the production environment binds them. */
async function bindShard(tenantId: string, ai: FakeAi, vectorize: FakeVectorize) {
  const stub = env.CORTEX.get(env.CORTEX.idFromName(defaultShard(tenantId)));
  await inStub(stub, async (instance) => {
    instance.env = { ...instance.env, AI: ai.binding, VECTORIZE: vectorize.binding };
  });
}

const exchange = (u: string, a: string) => [
  { role: "user", text: u },
  { role: "assistant", text: a },
];

let n = 0;
const inShard = <T>(fn: (db: D1Database) => Promise<T>) =>
  inStub(env.CORTEX.get(env.CORTEX.idFromName(`vector-test-${Date.now()}-${n++}`)), async (_i, state) =>
    fn(d1OverDurableSql(state.storage)),
  );
const note = (tenantId: string, refId: string, body: string): CortexDoc => ({
  tenantId,
  kind: "memory",
  refId,
  conversationId: null,
  seq: null,
  role: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  body,
});

describe("semantic path (deployed bindings)", () => {
  it("the index outbox writes each new message's vector under the tenant's namespace, before any search", async () => {
    const { tenantId, key } = await newTenantWithId();
    const [ai, vectorize] = [fakeAi(), fakeVectorize()];
    await bindShard(tenantId, ai, vectorize);
    const id = await createConversation(undefined, key);
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
    const hits = (await api("GET", "/v1/search?q=which%20colours", undefined, { key })).json.results;
    expect(hits[0].messageId).toBe(r.json.messages[0].id);

    // Deleting the conversation forgets its vectors.
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    await eventually(async () => vectorize.vectors.size === 0);
    expect(vectorize.deleted).toHaveLength(4);
  });

  it("a deleted note's vector goes with it", async () => {
    const { tenantId, key } = await newTenantWithId();
    const [ai, vectorize] = [fakeAi(), fakeVectorize()];
    await bindShard(tenantId, ai, vectorize);
    const saved = await api("POST", "/v1/memory", { text: "Guitar lessons on Thursdays." }, { key });
    expect(saved.status).toBe(201);
    // Notes are written outside a conversation's outbox: the search's catch-up embeds them.
    await api("GET", "/v1/search?q=music", undefined, { key });
    expect(vectorize.vectors.size).toBe(1);
    expect((await api("DELETE", `/v1/memory/${saved.json.id}`, undefined, { key })).status).toBe(204);
    expect(vectorize.vectors.size).toBe(0);
    expect(vectorize.deleted).toHaveLength(1);
  });

  it("never returns another tenant's documents, even from an index that ignores namespaces", async () => {
    for (const ignoreNamespaces of [false, true]) {
      await inShard(async (db) => {
        const [a, b] = [`ten_a${n++}`, `ten_b${n++}`];
        const bindings = { AI: fakeAi().binding, VECTORIZE: fakeVectorize({ ignoreNamespaces }).binding };
        await upsertDocs(db, [
          note(a, "mine", "Weekend on the ridge trail."),
          note(b, "theirs", "Hiking boots and mountain hikes."),
        ]);
        const path = semanticPathFor(bindings, db)!;
        expect(path.mode).toBe("deployed");
        await catchUp(db, path, a);
        await catchUp(db, path, b);
        const search = async (t: string) =>
          (await searchCortexPage(db, t, "hiking", { limit: 10, fusion: cortexFusionFor(bindings, db) })).hits.map(
            (h) => h.id,
          );
        expect(await search(a)).toEqual(["mine"]);
        expect(await search(b)).toEqual(["theirs"]);
      });
    }
  });

  it("orders a page by reciprocal-rank fusion of the BM25 and the vector rankings", async () => {
    await inShard(async (db) => {
      const t = `ten_fusion${n++}`;
      const bindings = { AI: fakeAi().binding, VECTORIZE: fakeVectorize().binding };
      await upsertDocs(db, [
        note(t, "a", "The invoice invoice for the trip."),
        note(t, "b", "Invoice paid: bill, payment, paid."),
        note(t, "c", "The bill came; payment done."),
        note(t, "d", "Gardening on Sunday."),
      ]);
      const lexical = (await searchCortexPage(db, t, "invoice", { limit: 10 })).hits.map((h) => h.id);
      const fused = (await searchCortexPage(db, t, "invoice", { limit: 10, fusion: cortexFusionFor(bindings, db) }))
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
