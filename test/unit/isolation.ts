// Which unit files share a module graph. Most run with `isolate: false`: each worker evaluates the
// shared modules once, not once per file (about 27 s of imports on the 2-core CI machine). A file
// that replaces a module (`vi.mock`, `vi.doMock`, `vi.resetModules`) or a global (`vi.stubGlobal`,
// an assignment to `globalThis`) would leak it into the files after it, so those run each in a
// fresh graph (the unit-isolated project). Found by reading the files, so a new one is never missed.
import { readdirSync, readFileSync } from "node:fs";

const DIR = new URL(".", import.meta.url).pathname;
const REPLACES = /\bvi\.(?:mock|doMock|resetModules|stubGlobal)\(|\bglobalThis\.\w+\s*=[^=]/;

/** The unit test files (paths from the project root) that replace a module or a global. */
export function filesThatReplaceModules(dir = DIR): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".test.ts") && REPLACES.test(readFileSync(`${dir}${name}`, "utf8")))
    .map((name) => `test/unit/${name}`)
    .sort();
}
