// The semantic path's assistant discount always lowers an assistant message's similarity: on a
// negative cosine, multiplying by 1/3 would raise it, and a less similar assistant message would
// outrank a user message (services/semantic/fusion.ts).
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { dot, hashedEmbedding } from "../../core/hashed-embedding";
import { searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { shardDatabase, shardNames } from "../../services/cortex/routing";
import { cortexFusionFor } from "../../services/semantic/select";
import { message } from "../cortex-docs";

it("semantic hits: the assistant discount must not lift a less similar assistant message above a user's", async () => {
  const db = shardDatabase(env, shardNames(env)[0]);
  const t = `ten_reviewct${Date.now()}`;
  const q = "kayak paddle river";
  const qv = hashedEmbedding(q);
  // Words of no lexical overlap with the query: the most negative cosine for the assistant's text,
  // and a user text between it and a third of it (more similar, yet below the discounted assistant).
  const cands = Array.from({ length: 5000 }, (_, i) => `zq${i}x`).map((text) => ({
    text,
    c: dot(qv, hashedEmbedding(text)),
  }));
  const worst = cands.reduce((a, b) => (b.c < a.c ? b : a));
  const assistant: string | null = worst.text;
  const user: string | null = cands.find((x) => x.c > worst.c * 0.9 && x.c < worst.c / 2.5)?.text ?? null;
  expect(user && assistant).toBeTruthy();
  const cu = dot(qv, hashedEmbedding(user!));
  const ca = dot(qv, hashedEmbedding(assistant!));
  // Ref ids of this run's own: a document's id is its kind and ref id, unique in the shard (as real
  // ref ids are), so another file's fixed "msg_asst" would share its row.
  const [userId, asstId] = [`msg_user_${t}`, `msg_asst_${t}`];
  await upsertDocs(db, [message(t, userId, "user", user!), message(t, asstId, "assistant", assistant!)]);
  const page = await searchCortexPage(db, t, {
    q,
    limit: 5,
    fusion: cortexFusionFor({ SEMANTIC_SEARCH: "local" }, db),
  });
  expect(cu).toBeGreaterThan(ca);
  expect(ca / 3).toBeGreaterThan(cu);
  // The user message is more similar and undiscounted: it must rank first.
  expect(page.hits.map((h) => h.id)).toEqual([userId, asstId]);
});
