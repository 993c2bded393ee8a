// The cortex's fusion hook, implemented: one page of the reciprocal-rank fusion of the lexical
// ranking (BM25, services/cortex) and the vector ranking of the same tenant's documents, the
// search's filters (conversation, kinds, ref prefix) and whose words are sought applied to both.
import { reciprocalRankFusion, RRF_K } from "../../core/rrf";
import { assistantWeight } from "../../core/speaker-weight";
import {
  type CortexFusion,
  discountedRole,
  hitFrom,
  hitRole,
  NOT_REFUSED,
  type SearchHit,
  type SearchOptions,
  type ShardDatabase,
} from "../cortex/search-index";
import { catchUp } from "./catch-up";
import type { SemanticPath } from "./types";

/**
 * The rankings' weights in the fusion (lexical, semantic), picked on RealMem, the tuning set, only
 * (`npm run bench:recall-semantic`, docs/api-notes.md "Search"): over 100 questions on every
 * haystack, each weight of the grid 5:1 to 50:1 ranked below the lexical ranking alone, and 50:1
 * least (recall@5 0.141 against 0.148; 8:1 0.119); over all 1,350 questions after the conversation
 * lift, 50:1 again (0.216 against 0.214 alone). So the vector ranking mostly fills in where
 * the lexical one runs short and breaks near-ties; it never outvotes an exact-term match. Measured
 * with a local sentence encoder; the deployed bge-m3 vectors are not measurable here.
 */
export const FUSION_WEIGHTS: readonly [number, number] = [50, 1];
/**
 * How deep each ranking is read before fusing, whatever page is asked for: the fused head is the
 * same on every page, and past it the lexical ranking goes on alone, so a paged walk is one
 * ranking (no hit shown twice, none skipped).
 */
export const FUSION_DEPTH = 50;
/** D1 binds at most 100 parameters per statement. */
const IDS_PER_LOOKUP = 80;
const SNIPPET_CHARS = 200;

export function semanticFusion(path: SemanticPath): CortexFusion {
  return {
    async page({ db, tenantId, q, opts, offset, lexical }) {
      const end = offset + opts.limit;
      // The vectors only add to the words: an embedding service or vector index that fails (a 429,
      // an outage) leaves the search its lexical ranking, never a 500.
      const vectors = async () => {
        try {
          await catchUp({ db, path, tenantId });
          return await semanticHits({ db, path, tenantId, q, opts, count: FUSION_DEPTH });
        } catch (err) {
          console.error("semantic search failed; answering with the lexical ranking alone", err);
          return null;
        }
      };
      const [lex, sem] = await Promise.all([lexical(FUSION_DEPTH), vectors()]);
      if (!sem) {
        const alone = lex.length === FUSION_DEPTH && end >= lex.length ? await lexical(end + 1) : lex;
        return { hits: alone.slice(offset, end), next: alone.length > end ? { offset: end } : null };
      }
      const byKey = new Map<string, SearchHit>();
      for (const h of [...sem, ...lex]) byKey.set(keyOf(h), h); // the lexical hit (highlighted snippet) wins
      const fused = reciprocalRankFusion([lex.map(keyOf), sem.map(keyOf)], { weights: [...FUSION_WEIGHTS] });
      // Lower is better, as with BM25 scores elsewhere in the cortex.
      let ranked = fused.map((f) => ({ ...byKey.get(f.id)!, score: -f.score }));
      if (end >= ranked.length && lex.length === FUSION_DEPTH) {
        // Past the fused head: the lexical ranking on from its start, less what the head holds
        // (enough of it: the head holds at most ranked.length of its hits).
        const shown = new Set(fused.map((f) => f.id));
        const worst = ranked.at(-1)?.score ?? 0;
        const rest = (await lexical(end + 1))
          .map((h, rank) => ({ ...h, score: Math.max(worst, -FUSION_WEIGHTS[0] / (RRF_K + rank + 1)) }))
          .filter((h) => !shown.has(keyOf(h)));
        ranked = [...ranked, ...rest];
      }
      const hits = ranked.slice(offset, end);
      return { hits, next: ranked.length > end ? { offset: end } : null };
    },
  };
}

const keyOf = (h: Pick<SearchHit, "kind" | "id">) => `${h.kind}:${h.id}`;

/**
 * A similarity discounted by `weight` (at most 1): always lowered, as a BM25 score divided by 3 is.
 * A positive one is multiplied by the weight; a negative one divided by it (multiplied, it would rise).
 */
const discount = (similarity: number, weight: number) => (similarity >= 0 ? similarity * weight : similarity / weight);

/** A vector search in one shard: the tenant's query, the search's filters, and how many hits. */
interface VectorSearch {
  db: ShardDatabase;
  path: SemanticPath;
  tenantId: string;
  q: string;
  opts: SearchOptions;
  count: number;
}

/** The tenant's documents nearest the query, best first, one hit per document, filters applied. */
async function semanticHits({ db, path, tenantId, q, opts, count }: VectorSearch): Promise<SearchHit[]> {
  const [vector] = await path.embedder.embed([q]);
  // Over-fetch: chunks of one document and filtered-out documents take places.
  const matches = await path.index.query(tenantId, vector, count * 3);
  const weight = assistantWeight(q, opts.said);
  const scoreOf = new Map(matches.map((m) => [m.id, m.score]));
  const filters: string[] = [];
  const params: unknown[] = [];
  if (opts.conversationId) filters.push("AND d.conversation_id = ?"), params.push(opts.conversationId);
  if (opts.refPrefix) filters.push("AND d.ref_id LIKE ?"), params.push(`${opts.refPrefix}%`);
  if (opts.kinds?.length)
    filters.push(`AND d.kind IN (${opts.kinds.map(() => "?").join(", ")})`), params.push(...opts.kinds);
  if (opts.withoutRefused) filters.push(`AND ${NOT_REFUSED}`);
  const best = new Map<string, SearchHit>();
  for (let i = 0; i < matches.length; i += IDS_PER_LOOKUP) {
    const ids = matches.slice(i, i + IDS_PER_LOOKUP).map((m) => m.id);
    const { results } = await db
      .prepare(
        `SELECT e.vec_id AS vecId, d.kind AS kind, d.ref_id AS id, d.conversation_id AS conversationId, d.seq AS seq, d.role AS storedRole,
                d.created_at AS createdAt, substr(d.body, 1, ${SNIPPET_CHARS}) AS snippet
         FROM cortex_embedded e JOIN cortex_docs d ON d.doc_id = e.doc_id
         WHERE e.tenant_id = ? AND d.tenant_id = ? AND e.vec_id IN (${ids.map(() => "?").join(", ")}) ${filters.join(" ")}`,
      )
      .bind(tenantId, tenantId, ...ids, ...params)
      .all<Omit<SearchHit, "messageId" | "score" | "role" | "from"> & { vecId: string; storedRole: string | null }>();
    for (const { vecId, storedRole, ...r } of results) {
      const discounted = r.kind === "message" && discountedRole(storedRole);
      const score = discounted ? discount(scoreOf.get(vecId) ?? 0, weight) : (scoreOf.get(vecId) ?? 0);
      const key = `${r.kind}:${r.id}`;
      const role = hitRole(storedRole);
      if ((best.get(key)?.score ?? -Infinity) < score)
        best.set(key, {
          ...r,
          role,
          from: hitFrom(r.kind, storedRole),
          messageId: r.kind === "message" ? r.id : null,
          score,
        });
    }
  }
  return [...best.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, count);
}
