// The house's layers point one way: core ← services ← agent ← durable-objects ← workers. Every
// relative import (static, dynamic or type-only) of every source file must point at its own layer
// or a lower one, and core imports no platform module. A file in a folder no layer names fails too,
// so a new top-level folder has to be placed before it can hold code.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { LAYERS } from "./layer-map";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));

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
        if (to < 0 || to > from)
          found.push(
            `${path} imports ${target} (${to < 0 ? "outside every layer" : LAYERS[to][0]}), above ${LAYERS[from][0]}`,
          );
      } else if (from === 0 && spec.startsWith("cloudflare:")) {
        found.push(`${path} imports ${spec}: core is pure code with no platform modules`);
      }
    }
  }
  return found;
}

/**
 * Import cycles among the production tree's relative imports (static, dynamic and type-only), one
 * per strongly connected group of files, named by its files: `a.ts <-> b.ts <-> c.ts`.
 */
function importCycles(files: { path: string; text: string }[]): string[] {
  const known = new Set(files.map((f) => f.path));
  const resolve = (from: string, spec: string): string | null => {
    const base = normalize(join(dirname(from), spec)).replace(/\.js$/, "");
    return [base, `${base}.ts`, `${base}/index.ts`].find((p) => known.has(p)) ?? null;
  };
  const edges = new Map<string, string[]>();
  for (const { path, text } of files) {
    const targets = [...text.matchAll(IMPORT)]
      .map((m) => m[2])
      .filter((s) => s.startsWith("."))
      .map((s) => resolve(path, s));
    edges.set(path, [...new Set(targets.filter((t): t is string => t !== null))].sort());
  }
  // Tarjan's strongly connected components; a group of two or more files is a cycle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group);
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  // Named by its files, alphabetically: breaking the group is one decision, wherever it is cut.
  return groups.map((group) => [...group].sort().join(" <-> ")).sort();
}

/** Known exceptions: none. A cycle found anywhere in the production tree fails the test. */
const KNOWN_CYCLES: string[] = [];

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
    const files = LAYERS.flat()
      .flatMap((top) => sources(top))
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
    expect(files.length).toBeGreaterThan(100);
    expect(violations(files)).toEqual([]);
  });

  // core/tokens.ts carries js-tiktoken's 1 MB rank table: a deployed worker leaves the offline model
  // out (OFFLINE_MODEL_BUNDLED:false), and with it the table, only while nothing else imports it.
  it("the offline token counter and its table are imported by the offline model alone", () => {
    const importers = LAYERS.flat()
      .flatMap((top) => sources(top))
      .filter((path) => !path.startsWith("core/offline-model/") && path !== "core/tokens.ts")
      .filter((path) =>
        [...readFileSync(join(ROOT, path), "utf8").matchAll(IMPORT)].some(
          ({ 2: spec }) =>
            spec.startsWith("js-tiktoken") ||
            (spec.startsWith(".") && normalize(join(dirname(path), spec)).replace(/\.(ts|js)$/, "") === "core/tokens"),
        ),
      );
    expect(importers).toEqual([]);
  });

  it("no import cycle among the production tree's files", () => {
    const files = LAYERS.flat()
      .flatMap((top) => sources(top))
      .filter((p) => p.endsWith(".ts"))
      .map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
    expect(files.length).toBeGreaterThan(100);
    expect(KNOWN_CYCLES.every((c) => c.split(" <-> ").every((p) => existsSync(join(ROOT, p))))).toBe(true);
    expect(importCycles(files)).toEqual(KNOWN_CYCLES);
  });

  it("finds a cycle through type-only, index and two-step imports, and none in a chain", () => {
    expect(
      importCycles([
        { path: "durable-objects/x/intake.ts", text: `import type { Runner } from "./runner";` },
        {
          path: "durable-objects/x/runner.ts",
          text: `import type { Input } from "./intake";\nimport { y } from "../../core/y";`,
        },
        { path: "core/y/index.ts", text: `export const y = 1;` },
        { path: "core/a.ts", text: `import { b } from "./b";` },
        { path: "core/b.ts", text: `const c = await import("./c");` },
        { path: "core/c.ts", text: `import { a } from "./a";` },
        { path: "core/d.ts", text: `import { a } from "./a";` },
      ]),
    ).toEqual(["core/a.ts <-> core/b.ts <-> core/c.ts", "durable-objects/x/intake.ts <-> durable-objects/x/runner.ts"]);
    expect(
      importCycles([
        { path: "core/a.ts", text: `import { b } from "./b";` },
        { path: "core/b.ts", text: `` },
      ]),
    ).toEqual([]);
  });

  it("catches an upward import, a platform module in core and a file outside every layer", () => {
    expect(
      violations([
        { path: "services/cortex.ts", text: `import { runAgentTurn } from "../agent/turn-loop";` },
        {
          path: "core/replay.ts",
          text: `import type { X } from "../durable-objects/conversation/conversation-do";\nimport { DurableObject } from "cloudflare:workers";`,
        },
        { path: "agent/tools/x.ts", text: `const m = await import("../../workers/chat/auth");` },
        { path: "misc/thing.ts", text: `` },
        {
          path: "workers/chat/app.ts",
          text: `import { x } from "../../core/ids";\nimport { y } from "../../durable-objects/conversation/conversation-do";`,
        },
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
