// Recorded embeddings: a model's vectors of a fixed set of texts, written once where the model can
// be reached and read back by the benches where it cannot (issue 28: the deployed bge-m3 needs a
// Cloudflare account; this machine has none). A recording is a folder:
//   meta.json    {model, dimensions, count}
//   keys.txt     one sha256 (hex) of each embedded text a line: the texts themselves are not kept
//   vectors.f32  the unit vectors, `dimensions` float32s each, in the same order
// A recorded embedder has the Embedder shape (services/semantic/types.ts): texts -> unit vectors.
// It answers only texts it recorded, and names how many it lacks rather than guessing.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const keyOf = (text) => createHash("sha256").update(text).digest("hex");

/** Embeds `texts` (deduplicated) with `embedder` in batches of `batch` and writes the recording to `dir`. */
export async function recordEmbeddings(embedder, texts, dir, { batch = 100, progress = () => {} } = {}) {
  const unique = [...new Set(texts)];
  const vectors = new Float32Array(unique.length * embedder.dimensions);
  for (let i = 0; i < unique.length; i += batch) {
    const part = unique.slice(i, i + batch);
    const got = await embedder.embed(part);
    if (got.length !== part.length)
      throw new Error(`${embedder.model}: ${got.length} vectors for ${part.length} texts`);
    got.forEach((v, j) => {
      if (v.length !== embedder.dimensions)
        throw new Error(`${embedder.model}: a vector of ${v.length} dimensions, not ${embedder.dimensions}`);
      vectors.set(v, (i + j) * embedder.dimensions);
    });
    progress(Math.min(i + batch, unique.length), unique.length);
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "keys.txt"), unique.map(keyOf).join("\n"));
  writeFileSync(join(dir, "vectors.f32"), Buffer.from(vectors.buffer));
  const meta = { model: embedder.model, dimensions: embedder.dimensions, count: unique.length };
  writeFileSync(join(dir, "meta.json"), `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

/** The embedder a recording in `dir` answers for. */
export function recordedEmbedder(dir) {
  const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8"));
  const keys = readFileSync(join(dir, "keys.txt"), "utf8").split("\n");
  const buf = readFileSync(join(dir, "vectors.f32"));
  const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
  if (keys.length !== meta.count || all.length !== meta.count * meta.dimensions)
    throw new Error(`${dir}: meta.json says ${meta.count} vectors; keys.txt and vectors.f32 disagree`);
  const at = new Map(keys.map((k, i) => [k, i]));
  const D = meta.dimensions;
  return {
    model: `${meta.model} (recorded)`,
    dimensions: D,
    async embed(texts) {
      const rows = texts.map((t) => at.get(keyOf(t)));
      const missing = rows.filter((r) => r === undefined).length;
      if (missing) throw new Error(`${dir}: ${missing} of ${texts.length} texts were not recorded (record them again)`);
      return rows.map((r) => all.slice(r * D, (r + 1) * D));
    },
  };
}
