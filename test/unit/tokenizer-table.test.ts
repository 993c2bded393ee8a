// The offline token counter (core/tokens.ts) carries js-tiktoken's 1 MB rank table. Only the offline
// model uses it; a deployed worker (OFFLINE_MODEL_BUNDLED:false) leaves the offline model out, and
// with it the table, so no other module may import the counter (docs/measurements.md, bundle sizes).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../..", import.meta.url).pathname;
const DIRS = ["agent", "core", "durable-objects", "services", "workers"];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name.startsWith(".") ? [] : sources(path);
    return /\.ts$/.test(name) ? [path] : [];
  });
}

describe("the tokenizer table", () => {
  it("is imported only by the offline model", () => {
    const importers = DIRS.flatMap((d) => sources(join(ROOT, d)))
      .map((path) => relative(ROOT, path))
      .filter((path) => !path.startsWith("core/offline-model/") && path !== "core/tokens.ts")
      .filter((path) =>
        /from\s+["'](?:\.\.?\/)+(?:core\/)?tokens["']|js-tiktoken/.test(readFileSync(join(ROOT, path), "utf8")),
      );
    expect(importers).toEqual([]);
  });
});
