// Stand-ins for the Workers AI and Vectorize bindings, in the real APIs' shape (ai.run(model,
// {text}) -> {shape, data}; index.upsert/query/deleteByIds with namespaces): the services are
// Cloudflare's and absent locally, so the tests hand these to the code that binds them.
// The fake model embeds by concepts: every word of a concept (a synonym group) lands on that
// concept's dimension, so "colours" meets "paint" the way a learned embedding would.
const CONCEPTS: readonly (readonly string[])[] = [
  ["colour", "colours", "color", "colors", "paint", "painted", "shade", "shades"],
  ["flight", "flights", "plane", "airport", "fly", "trip", "travel"],
  ["invoice", "invoices", "bill", "payment", "paid"],
  ["hike", "hikes", "hiking", "trail", "trails", "ridge", "mountain"],
  ["music", "saxophone", "guitar", "violin", "lessons", "practice"],
];
export const FAKE_DIMENSIONS = 1024;

export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(FAKE_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const c = CONCEPTS.findIndex((group) => group.includes(word));
    if (c >= 0) v[c] += 1;
  }
  v[FAKE_DIMENSIONS - 1] = 0.01; // no zero vector
  return v;
}

export interface FakeAi {
  binding: Ai;
  calls: { model: string; texts: string[] }[];
}

export function fakeAi(): FakeAi {
  const calls: FakeAi["calls"] = [];
  const run = async (model: string, inputs: { text: string | string[] }) => {
    const texts = typeof inputs.text === "string" ? [inputs.text] : inputs.text;
    calls.push({ model, texts });
    return { shape: [texts.length, FAKE_DIMENSIONS], data: texts.map(fakeEmbedding), pooling: "cls" };
  };
  return { binding: { run } as unknown as Ai, calls };
}

export interface StoredVector {
  id: string;
  values: number[];
  namespace?: string;
  metadata?: Record<string, VectorizeVectorMetadata>;
}

export interface FakeVectorize {
  binding: VectorizeIndex;
  vectors: Map<string, StoredVector>;
  deleted: string[];
  queries: number;
}

/** `ignoreNamespaces`: a misconfigured index that answers across namespaces. */
export function fakeVectorize(opts: { ignoreNamespaces?: boolean } = {}): FakeVectorize {
  const state: FakeVectorize = { binding: {} as VectorizeIndex, vectors: new Map(), deleted: [], queries: 0 };
  const mutation = (ids: string[]) => ({ ids, count: ids.length });
  const cosine = (a: number[], b: number[]) => {
    let d = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) (d += a[i] * b[i]), (na += a[i] * a[i]), (nb += b[i] * b[i]);
    return d / Math.sqrt(na * nb || 1);
  };
  const index = {
    async upsert(vectors: VectorizeVector[]) {
      for (const v of vectors) state.vectors.set(v.id, { ...v, values: Array.from(v.values) });
      return mutation(vectors.map((v) => v.id));
    },
    async query(vector: number[], options: VectorizeQueryOptions = {}) {
      state.queries++;
      const matches = [...state.vectors.values()]
        .filter((v) => opts.ignoreNamespaces || v.namespace === options.namespace)
        .map((v) => ({
          id: v.id,
          namespace: opts.ignoreNamespaces ? undefined : v.namespace,
          score: cosine(vector, v.values),
        }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, options.topK ?? 5);
      return { matches, count: matches.length };
    },
    async deleteByIds(ids: string[]) {
      for (const id of ids) if (state.vectors.delete(id)) state.deleted.push(id);
      return mutation(ids);
    },
  };
  state.binding = index as unknown as VectorizeIndex;
  return state;
}
