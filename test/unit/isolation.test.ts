// The unit files that replace a module or a global are found by reading them, so each runs in a
// fresh module graph (unit-isolated) and leaks nothing into the files that share one (unit).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { filesThatReplaceModules } from "./isolation";

/** A call spelled in pieces, so this file is not itself taken for one that replaces something. */
const call = (name: string, args: string) => `vi.${name}(${args});`;

describe("filesThatReplaceModules", () => {
  it("finds vi.mock, vi.doMock, vi.resetModules, vi.stubGlobal and an assignment to globalThis, and nothing else", () => {
    const dir = `${mkdtempSync(join(tmpdir(), "unit-isolation-"))}/`;
    const files: Record<string, string> = {
      "a-mock.test.ts": call("mock", '"../../services/x"'),
      "b-do-mock.test.ts": call("doMock", '"../../services/x"'),
      "c-reset.test.ts": call("resetModules", ""),
      "d-stub.test.ts": call("stubGlobal", '"fetch", f'),
      "e-global.test.ts": ["globalThis", "RegExp = Proxy;"].join("."),
      "f-spy.test.ts": `${call("spyOn", 'console, "error"')} if (globalThis.fetch === f) {}`,
      "g-plain.test.ts": 'import { x } from "../../core/x";',
      "h-helper.ts": call("mock", '"../../services/x"'),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(`${dir}${name}`, text);
    expect(filesThatReplaceModules(dir)).toEqual([
      "test/unit/a-mock.test.ts",
      "test/unit/b-do-mock.test.ts",
      "test/unit/c-reset.test.ts",
      "test/unit/d-stub.test.ts",
      "test/unit/e-global.test.ts",
    ]);
  });

  it("finds this project's own: the files that mock services", () => {
    const found = filesThatReplaceModules();
    expect(found).toContain("test/unit/mcp-call.test.ts");
    expect(found).toContain("test/unit/model-base-url.test.ts");
    expect(found).not.toContain("test/unit/isolation.test.ts");
  });
});
