// Workers AI's text embeddings through Cloudflare's REST API, for recording a set's vectors from a
// machine with an account (record-embeddings.mjs): POST /accounts/:id/ai/run/:model with
// {text: [...]}, answered {success, result: {shape, data}, errors}. The worker itself calls the
// same model through its AI binding (services/semantic/workers-ai.ts); this is the same request
// from outside, with the same batch size, cut and normalization.
const API = "https://api.cloudflare.com/client/v4";
const TEXTS_PER_CALL = 50;
const MAX_CHARS = 8000;

const unit = (values) => {
  const v = Float32Array.from(values);
  const norm = Math.hypot(...v) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
};

/** Attempts per call: a 429 or 5xx (or a dropped connection) is tried again after 1, 2, 4 s. */
const ATTEMPTS = 4;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** An Embedder over the REST API: `accountId`, an API `token` with Workers AI read, the `model` and its `dimensions`. */
export function workersAiRestEmbedder({
  accountId,
  token,
  model = "@cf/baai/bge-m3",
  dimensions = 1024,
  fetch = globalThis.fetch,
  sleep = pause,
}) {
  if (!accountId || !token)
    throw new Error("Workers AI over REST needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN");
  return {
    model,
    dimensions,
    async embed(texts) {
      const out = [];
      for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
        const batch = texts.slice(i, i + TEXTS_PER_CALL).map((t) => t.slice(0, MAX_CHARS));
        const post = () =>
          fetch(`${API}/accounts/${accountId}/ai/run/${model}`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ text: batch, truncate_inputs: true }),
          });
        let res;
        for (let attempt = 1; ; attempt++) {
          res = await post().catch((err) => (attempt < ATTEMPTS ? null : Promise.reject(err)));
          if ((res && res.status !== 429 && res.status < 500) || attempt === ATTEMPTS) break;
          await sleep(1000 * 2 ** (attempt - 1));
        }
        const body = await res.json().catch(() => null);
        if (!res.ok || !body?.success) {
          const why = body?.errors?.map((e) => e.message).join("; ") || `HTTP ${res.status}`;
          throw new Error(`${model}: ${why}`);
        }
        const data = body.result?.data;
        if (!Array.isArray(data) || data.length !== batch.length || data.some((v) => v.length !== dimensions))
          throw new Error(`${model} answered ${data?.length ?? "no"} embeddings for ${batch.length} texts`);
        out.push(...data.map(unit));
      }
      return out;
    },
  };
}
