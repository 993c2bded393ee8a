// wrangler.toml's production environment declares every binding again (wrangler does not inherit
// bindings into an environment) plus the semantic path's AI and VECTORIZE, which nothing else may
// declare: local dev and the tests must run without a Cloudflare account.
import { unstable_readConfig } from "wrangler";
import { describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;
const read = (env?: string) => unstable_readConfig({ config: `${root}wrangler.toml`, env }, { hideWarnings: true });

const bindings = (c: ReturnType<typeof read>) => ({
  name: c.name,
  durableObjects: c.durable_objects.bindings,
  d1: c.d1_databases,
  r2: c.r2_buckets,
  queues: c.queues,
  vars: c.vars,
  triggers: c.triggers,
  assets: c.assets,
});

describe("wrangler production environment", () => {
  it("has every binding of the default config, under the same worker name", () => {
    expect(bindings(read("production"))).toEqual(bindings(read()));
  });
  it("adds Workers AI and Vectorize there and only there", () => {
    const prod = read("production");
    expect(prod.ai?.binding).toBe("AI");
    expect(prod.vectorize.map((v: { binding: string }) => v.binding)).toEqual(["VECTORIZE"]);
    const dev = read();
    expect(dev.ai).toBeUndefined();
    expect(dev.vectorize).toEqual([]);
  });
});
