// A function takes at most three positional parameters; more go in one options object, so a call
// names what it passes. Held for the turn path's layers (agent, durable-objects, workers); core and
// services follow as they are reworked. agent/tools/ is left out while its ToolContext is reworked.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const HELD = ["agent", "durable-objects", "workers"];
const LEFT_OUT = ["agent/tools/"];

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
  it("no function of the turn path's layers takes more than three positional parameters", () => {
    const files = HELD.flatMap(sources).filter((p) => !LEFT_OUT.some((out) => p.startsWith(out)));
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((p) => longParameterLists(p, readFileSync(join(ROOT, p), "utf8")))).toEqual([]);
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
