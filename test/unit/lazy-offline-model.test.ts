// The offline model (and with it the ~1 MB tokenizer rank table) is loaded on its first call only:
// a worker that talks to Anthropic never evaluates it. Bundled here as wrangler bundles a worker
// (esbuild, one ESM file), the table must sit inside a lazy module initializer, not at top level.
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;

const bundle = (define: Record<string, string> = {}) =>
  build({
    entryPoints: [`${ROOT}core/model-client.ts`],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker"],
    external: ["node:*"],
    write: false,
    logLevel: "silent",
    define,
  });

describe("the offline model in a worker bundle", () => {
  it("is evaluated only when the offline model is first used", async () => {
    const code = (await bundle()).outputFiles[0].text;
    expect(code).toContain('"bpe_ranks"');
    expect(code).toContain("function createOfflineModelFetch(");
    // esbuild turns a dynamically imported module into an `init_*` function run on first import().
    expect(code).toMatch(/var init_cl100k_base = __esm\(/);
    expect(code).not.toMatch(/^var cl100k_base_default = \{/m);
  });

  it("is not shipped at all in a production build (OFFLINE_MODEL_BUNDLED=false, as npm run deploy:* and check build)", async () => {
    const code = (await bundle({ OFFLINE_MODEL_BUNDLED: "false" })).outputFiles[0].text;
    expect(code).not.toContain('"bpe_ranks"');
    expect(code).not.toContain("function createOfflineModelFetch(");
    // The client still builds for Anthropic; only the offline provider is gone from this build.
    expect(code).toContain("api.anthropic.com");
  });
});
