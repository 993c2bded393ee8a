// A workers file that fires the cron trigger or claims due automations acts on every tenant's rows
// in the storage the "workers" files share: it would claim (and run, and count) other files'
// automations. Each such file runs in workers-isolated, with storage of its own.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ISOLATED } from "../workers/isolated";

const DIR = new URL("../workers/", import.meta.url).pathname;
/** The cron trigger (directly, or through automation-helpers' `tick`), a claim of due automations, or the corpus roll-up. */
const ACTS_ON_EVERY_TENANT = /\.scheduled!?\(|\btick\(|\bclaimDuePage\(|\brollUpCorpusDays\(/;

describe("the workers files that act on every tenant's rows", () => {
  it("each runs with storage of its own", () => {
    const acting = readdirSync(DIR)
      .filter((name) => name.endsWith(".test.ts") && ACTS_ON_EVERY_TENANT.test(readFileSync(`${DIR}${name}`, "utf8")))
      .map((name) => `test/workers/${name}`);
    expect(acting.length).toBeGreaterThan(10);
    expect(acting.filter((file) => !ISOLATED.includes(file))).toEqual([]);
  });

  it("lists only files that exist", () => {
    const files = new Set(readdirSync(DIR).map((name) => `test/workers/${name}`));
    expect(ISOLATED.filter((file) => !files.has(file))).toEqual([]);
  });
});
