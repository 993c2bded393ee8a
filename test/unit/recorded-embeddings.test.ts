// Recorded embeddings (scripts/embeddings/recorded.mjs): a model's vectors written once where it can
// be reached, read back by the benches where it cannot; and the Workers AI REST embedder that
// records bge-m3's (scripts/embeddings/workers-ai-rest.mjs), against a fake of Cloudflare's API.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { recordedEmbedder, recordEmbeddings } from "../../scripts/embeddings/recorded.mjs";
import { workersAiRestEmbedder } from "../../scripts/embeddings/workers-ai-rest.mjs";

/** A deterministic stand-in embedder: each text's vector is its char codes folded into 4 dimensions. */
function foldEmbedder() {
  const calls: string[][] = [];
  return {
    calls,
    model: "fold-4",
    dimensions: 4,
    async embed(texts: readonly string[]) {
      calls.push([...texts]);
      return texts.map((t) => {
        const v = new Float32Array(4);
        for (let i = 0; i < t.length; i++) v[i % 4] += t.charCodeAt(i);
        return v;
      });
    },
  };
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "recorded-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("recorded embeddings", () => {
  it("read back exactly what was recorded, each text once, without keeping the texts", async () => {
    const dir = tempDir();
    const live = foldEmbedder();
    const texts = ["camping by the lake", "a whale exhibit", "camping by the lake", "grilled food in Ktown"];
    const meta = await recordEmbeddings(live, texts, dir, { batch: 2 });
    expect(meta).toEqual({ model: "fold-4", dimensions: 4, count: 3 });
    expect(live.calls).toEqual([["camping by the lake", "a whale exhibit"], ["grilled food in Ktown"]]);
    expect(readFileSync(join(dir, "keys.txt"), "utf8")).not.toMatch(/camping|whale/);
    const recorded = recordedEmbedder(dir);
    expect(recorded.model).toBe("fold-4 (recorded)");
    const asked = ["grilled food in Ktown", "camping by the lake"];
    expect(await recorded.embed(asked)).toEqual(await live.embed(asked));
  });

  it("refuse a text that was not recorded, and a recording whose files disagree", async () => {
    const dir = tempDir();
    await recordEmbeddings(foldEmbedder(), ["one", "two"], dir);
    await expect(recordedEmbedder(dir).embed(["one", "three", "four"])).rejects.toThrow(
      /2 of 3 texts were not recorded/,
    );
    writeFileSync(join(dir, "keys.txt"), "abc");
    expect(() => recordedEmbedder(dir)).toThrow(/keys.txt and vectors.f32 disagree/);
  });

  it("refuse an embedder that answers the wrong count or size", async () => {
    const short = { ...foldEmbedder(), embed: async () => [new Float32Array(4)] };
    await expect(recordEmbeddings(short, ["a", "b"], tempDir())).rejects.toThrow(/1 vectors for 2 texts/);
    const wide = { ...foldEmbedder(), embed: async (t: readonly string[]) => t.map(() => new Float32Array(5)) };
    await expect(recordEmbeddings(wide, ["a"], tempDir())).rejects.toThrow(/5 dimensions, not 4/);
  });
});

describe("Workers AI over REST", () => {
  /** A fake of POST /accounts/:id/ai/run/:model answering `dims`-dimension vectors, or `fail`. */
  function fakeApi(dims: number, fail?: { status: number; message: string }) {
    const requests: { url: string; auth: string; body: { text: string[]; truncate_inputs: boolean } }[] = [];
    const fetch = async (url: string, init: { headers: Record<string, string>; body: string }) => {
      const body = JSON.parse(init.body);
      requests.push({ url, auth: init.headers.authorization, body });
      if (fail)
        return Response.json(
          { success: false, errors: [{ code: 10000, message: fail.message }] },
          { status: fail.status },
        );
      const data = body.text.map(() => Array.from({ length: dims }, (_, i) => (i === 0 ? 3 : i === 1 ? 4 : 0)));
      return Response.json({ success: true, errors: [], result: { shape: [data.length, dims], data } });
    };
    return { requests, fetch };
  }

  it("posts batches of 50 texts to the model's run URL with the token, and answers unit vectors", async () => {
    const api = fakeApi(1024);
    const embedder = workersAiRestEmbedder({ accountId: "acc1", token: "tok", fetch: api.fetch });
    const texts = Array.from({ length: 120 }, (_, i) => `text ${i} ${"x".repeat(i === 0 ? 9000 : 0)}`);
    const vectors = await embedder.embed(texts);
    expect(api.requests.map((r) => r.body.text.length)).toEqual([50, 50, 20]);
    expect(api.requests[0].url).toBe("https://api.cloudflare.com/client/v4/accounts/acc1/ai/run/@cf/baai/bge-m3");
    expect(api.requests[0].auth).toBe("Bearer tok");
    expect(api.requests[0].body.truncate_inputs).toBe(true);
    expect(api.requests[0].body.text[0]).toHaveLength(8000);
    expect(vectors).toHaveLength(120);
    expect(Array.from(vectors[0].slice(0, 3))).toEqual([expect.closeTo(0.6), expect.closeTo(0.8), 0]);
  });

  it("tries a 429 or 5xx again after 1, 2 and 4 s, then names the error", async () => {
    const busy = fakeApi(1024, { status: 429, message: "Too many requests" });
    const ok = fakeApi(1024);
    let calls = 0;
    const flaky = (url: string, init: { headers: Record<string, string>; body: string }) =>
      ++calls < 3 ? busy.fetch(url, init) : ok.fetch(url, init);
    const waited: number[] = [];
    const sleep = async (ms: number) => {
      waited.push(ms);
    };
    const vectors = await workersAiRestEmbedder({ accountId: "a", token: "t", fetch: flaky, sleep }).embed(["x"]);
    expect(vectors).toHaveLength(1);
    expect(waited).toEqual([1000, 2000]);
    waited.length = 0;
    await expect(
      workersAiRestEmbedder({ accountId: "a", token: "t", fetch: busy.fetch, sleep }).embed(["x"]),
    ).rejects.toThrow(/Too many requests/);
    expect(waited).toEqual([1000, 2000, 4000]);
  });

  it("names the API's error, a wrong answer, and missing credentials", async () => {
    const denied = fakeApi(1024, { status: 403, message: "Authentication error" });
    await expect(
      workersAiRestEmbedder({ accountId: "a", token: "t", fetch: denied.fetch }).embed(["x"]),
    ).rejects.toThrow(/@cf\/baai\/bge-m3: Authentication error/);
    const narrow = fakeApi(384);
    await expect(
      workersAiRestEmbedder({ accountId: "a", token: "t", fetch: narrow.fetch }).embed(["x"]),
    ).rejects.toThrow(/answered 1 embeddings for 1 texts/);
    expect(() => workersAiRestEmbedder({ accountId: undefined, token: "t" })).toThrow(/CLOUDFLARE_ACCOUNT_ID/);
  });
});
