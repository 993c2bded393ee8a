// `npm run migrate:cortex` has a documented end: run it until it reports done; from version 0.2.0
// the route, the script and the D1 cortex tables are gone. Until that version they all stay; from
// it on, this fails while any of them is still here.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = normalize(join(dirname(new URL(import.meta.url).pathname), "../.."));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const END = [0, 2, 0];

const pkg = JSON.parse(read("package.json")) as { version: string; scripts: Record<string, string> };
const version = pkg.version.split(".").map(Number);
const reachedEnd =
  version[0] !== END[0] ? version[0] > END[0] : version[1] !== END[1] ? version[1] > END[1] : version[2] >= END[2];

describe("the cortex move's end", () => {
  it("is documented: run until done, gone from 0.2.0", () => {
    const notes = read("docs/api-notes.md");
    const section = notes.slice(
      notes.indexOf("## Moving the cortex into its shards"),
      notes.indexOf("## Reading your own writes"),
    );
    expect(section).toMatch(/until it reports `done`/);
    expect(section).toMatch(/from version 0\.2\.0/);
    expect(read("README.md")).toMatch(/until\s+version 0\.2\.0/);
  });

  it.runIf(!reachedEnd)("before 0.2.0 the move is still there, and the script ends by saying done", () => {
    expect(pkg.scripts["migrate:cortex"]).toBe("node scripts/migrate-cortex.mjs");
    expect(read("scripts/migrate-cortex.mjs")).toMatch(/console\.log\(\s*"done: /);
    expect(read("workers/chat/routes/admin.ts")).toContain('"/cortex/migrate"');
  });

  it.runIf(reachedEnd)("from 0.2.0 the route, the script and the legacy rows are gone", () => {
    expect(pkg.scripts["migrate:cortex"]).toBeUndefined();
    expect(existsSync(join(ROOT, "scripts/migrate-cortex.mjs"))).toBe(false);
    expect(existsSync(join(ROOT, "services/cortex/legacy-rows.ts"))).toBe(false);
    expect(existsSync(join(ROOT, "services/cortex/migrate-legacy.ts"))).toBe(false);
    expect(read("workers/chat/routes/admin.ts")).not.toContain('"/cortex/migrate"');
  });
});
