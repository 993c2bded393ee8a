// A function takes at most three positional parameters; more go in one options object, so a call
// names what it passes. Held for every layer of the Worker code: agent, core, durable-objects,
// services and workers. LEFT_OUT holds what is not held yet, each entry a path prefix or a
// `path name` for one function, with the reason.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const HELD = ["agent", "core", "durable-objects", "services", "workers"];
const LEFT_OUT = [
  // Per path point and per glyph box of every PDF content stream: a point is two numbers, and an
  // object per call would allocate in the text extractor's hottest loop.
  "services/attachments/formats/pdf/geometry.ts growBounds",
];

/** Whether the finding `file:line name (n)` is left out, by its file's path or by its file and name. */
function leftOut(finding: string): boolean {
  const [location, name] = finding.split(" ");
  const path = location.slice(0, location.lastIndexOf(":"));
  return LEFT_OUT.some((out) => (out.includes(" ") ? out === `${path} ${name}` : path.startsWith(out)));
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === "public" ? [] : sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** `file:line name (n)` for every function, method or arrow of `text` with more than three parameters. */
function longParameterLists(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isFunctionLike(node) &&
      !ts.isConstructorDeclaration(node) &&
      !ts.isFunctionTypeNode(node) &&
      node.parameters.length > 3
    ) {
      const name =
        node.name?.getText() ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : "<anonymous>");
      found.push(
        `${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name} (${node.parameters.length})`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("options objects", () => {
  it("no function of the held layers takes more than three positional parameters", () => {
    const files = HELD.flatMap(sources);
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((p) => longParameterLists(p, readFileSync(join(ROOT, p), "utf8")));
    expect(found.filter((f) => !leftOut(f))).toEqual([]);
  }, 30_000); // parses every file of five layers: seconds on a busy machine

  it("leaves out only what is named: a path prefix, or one function of one file", () => {
    expect(leftOut("services/attachments/formats/pdf/geometry.ts:9 growBounds (4)")).toBe(true);
    expect(leftOut("services/semantic/catch-up.ts:3 catchUp (4)")).toBe(false);
    expect(leftOut("services/cortex/search-index.ts:178 page (6)")).toBe(false);
    expect(leftOut("services/attachments/formats/pdf/geometry.ts:9 growBoundsToo (4)")).toBe(false);
    expect(leftOut("services/usage.ts:104 usageReport (5)")).toBe(false);
  });

  it("every named exception still names a function with a long parameter list", () => {
    for (const out of LEFT_OUT.filter((o) => o.includes(" "))) {
      const [path, name] = out.split(" ");
      const found = longParameterLists(path, readFileSync(join(ROOT, path), "utf8"));
      expect(found.some((f) => f.split(" ")[1] === name)).toBe(true);
    }
  });

  it("finds a long parameter list on a function, a method, an arrow and a signature, and passes an options object", () => {
    const text = [
      "export function a(w: number, x: number, y: number, z: number) {}",
      "class C { m(w: number, x: number, y: number, z: number) {} }",
      "const f = (w: number, x: number, y: number, z: number) => 0;",
      "interface I { onRequest?(w: number, x: number, y: number, z: number): void }",
      "export function ok(w: number, o: { x: number; y: number; z: number }) {}",
    ].join("\n");
    expect(longParameterLists("x.ts", text)).toEqual([
      "x.ts:1 a (4)",
      "x.ts:2 m (4)",
      "x.ts:3 f (4)",
      "x.ts:4 onRequest (4)",
    ]);
  });
});
