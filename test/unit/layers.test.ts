// The house's layers point one way: core ← services ← agent ← durable-objects ← workers. Every
// relative import (static, dynamic or type-only) of every source file must point at its own layer
// or a lower one, and core imports no platform module. A file in a folder no layer names fails too,
// so a new top-level folder has to be placed before it can hold code.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));

/** Lowest first. Folders on one line share a layer. data/ holds files code imports (Text and Data modules), never code. */
const LAYERS: readonly (readonly string[])[] = [
  ["core", "r2-layout", "db", "data"],
  ["services"],
  ["agent"],
  ["durable-objects"],
  ["workers"],
];
/** Top-level folders outside the layers: they may import any layer, and no layer imports them. */
const OUTSIDE = ["test", "scripts", "client", "docs", "node_modules", "dist", "test-artifacts", "bench-results"];
const SOURCE = /\.(ts|mts|js|mjs)$/;
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])([^"']+)\1/g;

function layerOf(path: string): number {
  const top = path.split("/")[0];
  return LAYERS.findIndex((folders) => folders.includes(top));
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === "public" ? [] : sources(path);
    return SOURCE.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function violations(files: { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    const from = layerOf(path);
    if (from < 0) {
      found.push(`${path}: in no layer`);
      continue;
    }
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[2];
      if (spec.startsWith(".")) {
        const target = normalize(join(dirname(path), spec));
        const to = layerOf(target);
        if (to < 0 || to > from) found.push(`${path} imports ${target} (${to < 0 ? "outside every layer" : LAYERS[to][0]}), above ${LAYERS[from][0]}`);
      } else if (from === 0 && spec.startsWith("cloudflare:")) {
        found.push(`${path} imports ${spec}: core is pure code with no platform modules`);
      }
    }
  }
  return found;
}

describe("layers", () => {
  it("every top-level folder with code is a layer or named as outside them", () => {
    const unplaced = readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith(".") && !OUTSIDE.includes(e.name) && layerOf(e.name) < 0)
      .filter((e) => sources(e.name).length > 0)
      .map((e) => e.name);
    expect(unplaced).toEqual([]);
  });

  it("data/ holds no code", () => {
    expect(sources("data")).toEqual([]);
  });

  it("every import points at its own layer or a lower one", () => {
    const files = LAYERS.flat().flatMap((top) => sources(top)).map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
    expect(files.length).toBeGreaterThan(100);
    expect(violations(files)).toEqual([]);
  });

  it("catches an upward import, a platform module in core and a file outside every layer", () => {
    expect(
      violations([
        { path: "services/cortex.ts", text: `import { runAgentTurn } from "../agent/turn-loop";` },
        { path: "core/replay.ts", text: `import type { X } from "../durable-objects/conversation/conversation-do";\nimport { DurableObject } from "cloudflare:workers";` },
        { path: "agent/tools/x.ts", text: `const m = await import("../../workers/chat/auth");` },
        { path: "misc/thing.ts", text: `` },
        { path: "workers/chat/app.ts", text: `import { x } from "../../core/ids";\nimport { y } from "../../durable-objects/conversation/conversation-do";` },
      ]),
    ).toEqual([
      "services/cortex.ts imports agent/turn-loop (agent), above services",
      "core/replay.ts imports durable-objects/conversation/conversation-do (durable-objects), above core",
      "core/replay.ts imports cloudflare:workers: core is pure code with no platform modules",
      "agent/tools/x.ts imports workers/chat/auth (workers), above agent",
      "misc/thing.ts: in no layer",
    ]);
  });
});
