// The local semantic path as a lever, over the same turns as recall-levers.mjs: the hashed
// embedding (core/hashed-embedding.ts, bundled as it ships) ranks the turns by cosine, the
// assistant's turns weighted as the cortex weighs them, and the fusion reads each ranking 50 deep
// as services/semantic/fusion.ts does.
import { importTypeScript } from "./common.mjs";

const DEPTH = 50;
const EMBED_CHARS = 4000;
let core;

export async function loadSemanticCore() {
  core ??= {
    ...(await importTypeScript("core/hashed-embedding.ts")),
    ...(await importTypeScript("core/rrf.ts")),
    ...(await importTypeScript("core/speaker-weight.ts")),
  };
  return core;
}

/** Lever name -> ranked turn indexes; `shipped` is the shipped lexical ranking of the same turns. */
export function semanticLevers(c, turns, question, shipped) {
  const q = c.hashedEmbedding(question);
  const weight = c.assistantWeight(question);
  const semantic = turns
    .map((t, i) => ({
      i,
      s: c.dot(q, c.hashedEmbedding(t.text.slice(0, EMBED_CHARS))) * (t.role === "assistant" ? weight : 1),
    }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.i);
  const fuse = (weights) =>
    c
      .reciprocalRankFusion([shipped.slice(0, DEPTH).map(String), semantic.slice(0, DEPTH).map(String)], { weights })
      .map((f) => Number(f.id));
  return {
    "semantic alone (hashed words + trigrams)": semantic,
    "shipped + semantic, RRF 1:1 (SEMANTIC_SEARCH=local)": fuse([1, 1]),
    "shipped + semantic, RRF 2:1": fuse([2, 1]),
  };
}
