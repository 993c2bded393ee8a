// core/json-guard.ts's walk on large values gives the same answers as the walk it replaced (which
// built a path string per element up front): a check of behaviour only. What it costs, the point of
// the new walk, is measured beside JSON.parse by `npm run bench:json-guard` (docs/measurements.md).
import { describe, expect, it } from "vitest";
import { jsonValueProblem, MAX_JSON_DEPTH, nestedTooDeep } from "../../core/json-guard";

/** The guard as it was: one stack entry and one path string per node, built up front. */
function eagerProblem(root: unknown, rootName = "body"): string | null {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value: root, depth: 0, path: rootName }];
  while (stack.length) {
    const { value, depth, path } = stack.pop() as { value: unknown; depth: number; path: string };
    if (typeof value === "string") {
      if (!value.isWellFormed()) return `${path}: not well-formed Unicode (a lone surrogate)`;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return nestedTooDeep(rootName);
    if (Array.isArray(value))
      value.forEach((v, i) => stack.push({ value: v, depth: depth + 1, path: `${path}[${i}]` }));
    else
      for (const [k, v] of Object.entries(value)) {
        if (!k.isWellFormed()) return `${path}: a key is not well-formed Unicode (a lone surrogate)`;
        // A document's fields are named bare; a root named by a path into one keeps it (json-guard-path.test.ts).
        stack.push({ value: v, depth: depth + 1, path: depth === 0 && !/[.[]/.test(rootName) ? k : `${path}.${k}` });
      }
  }
  return null;
}

/** A small deterministic generator (no Math.random: a failure reproduces). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const LONE = "\ud800";

function randomValue(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 70 || r < 0.3) {
    const leaf = next();
    if (leaf < 0.1) return `x${LONE}`;
    if (leaf < 0.4) return "fine";
    if (leaf < 0.6) return 1;
    if (leaf < 0.7) return null;
    return true;
  }
  const n = Math.floor(next() * 4);
  if (r < 0.65) return Array.from({ length: n }, () => randomValue(next, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const key = next() < 0.05 ? `k${LONE}` : next() < 0.1 ? "body" : `k${i}`;
    out[key] = randomValue(next, depth + 1);
  }
  return out;
}

describe("jsonValueProblem on large values", () => {
  // Its cost is measured, not timed here: `npm run bench:json-guard` (docs/measurements.md).
  it("walks a 2M-element array (a 4 MB frame of zeros) with the right answer", () => {
    const zeros = JSON.parse(`{"type":"ping","x":[${"0,".repeat(2_000_000 - 1)}0]}`) as { x: unknown[] };
    expect(zeros.x).toHaveLength(2_000_000);
    expect(jsonValueProblem(zeros, "frame")).toBeNull();
    // The element that is wrong is named by its place, found among two million.
    zeros.x[1_234_567] = [{ a: `bad${LONE}` }];
    expect(jsonValueProblem(zeros, "frame")).toBe("x[1234567][0].a: not well-formed Unicode (a lone surrogate)");
  });

  it("reads each element of a large array once, and names a bad one deep inside", () => {
    const objects = Array.from({ length: 200_000 }, (_, i) => ({ role: "user", n: i, tags: ["a"] }));
    // Every index read of the outer array, counted: the walk is one pass, whatever the size.
    let reads = 0;
    const counted = new Proxy(objects, {
      get: (target, prop, receiver) => {
        if (typeof prop === "string" && /^\d+$/.test(prop)) reads++;
        return Reflect.get(target, prop, receiver);
      },
    });
    expect(jsonValueProblem({ strings: ["well formed"], objects: counted })).toBeNull();
    expect(reads).toBe(objects.length);
    objects[199_999].tags.push(LONE);
    expect(jsonValueProblem({ objects })).toBe("objects[199999].tags[1]: not well-formed Unicode (a lone surrogate)");
  });

  it("answers exactly as the walk it replaced on thousands of generated values", () => {
    const next = rng(42);
    let problems = 0;
    for (let i = 0; i < 5_000; i++) {
      const value = randomValue(next, 0);
      const rootName = i % 3 === 0 ? "frame" : i % 3 === 1 ? "body" : "m.usage";
      const expected = eagerProblem(value, rootName);
      if (expected) problems++;
      expect(jsonValueProblem(value, rootName)).toBe(expected);
    }
    // The corpus has both kinds of answers.
    expect(problems).toBeGreaterThan(100);
    expect(problems).toBeLessThan(4_900);
  });

  it("keeps the rules at their edges: depth, keys, the root itself", () => {
    const nest = (n: number): unknown => (n === 0 ? 1 : [nest(n - 1)]);
    expect(jsonValueProblem(nest(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonValueProblem(nest(MAX_JSON_DEPTH + 1))).toBe("body: nested deeper than 64 levels");
    expect(jsonValueProblem(LONE, "frame")).toBe("frame: not well-formed Unicode (a lone surrogate)");
    expect(jsonValueProblem({ [`a${LONE}`]: 1 })).toBe("body: a key is not well-formed Unicode (a lone surrogate)");
    expect(jsonValueProblem({ a: { b: [0, { [LONE]: 1 }] } })).toBe(
      "a.b[1]: a key is not well-formed Unicode (a lone surrogate)",
    );
    expect(jsonValueProblem([["ok", LONE]])).toBe("body[0][1]: not well-formed Unicode (a lone surrogate)");
    for (const v of [null, 0, true, "", [], {}]) expect(jsonValueProblem(v)).toBeNull();
  });
});
