// README.md's table of environment variables is generated from core/env-config.ts
// (`npm run env-table`); this fails while the committed table is stale.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENV_VARS } from "../../core/env-config";
import { envTable, withEnvTable } from "../../scripts/env-table.mjs";

const root = new URL("../..", import.meta.url).pathname;

describe("README's table of environment variables", () => {
  it("is what `npm run env-table` writes", () => {
    const readme = readFileSync(`${root}README.md`, "utf8");
    expect(readme, "README.md's variable table is stale: run npm run env-table").toBe(
      withEnvTable(readme, envTable(ENV_VARS)),
    );
  });

  it("has a row per variable with its default", () => {
    const table = envTable(ENV_VARS);
    expect(table.split("\n")).toHaveLength(2 + Object.keys(ENV_VARS).length);
    expect(table).toContain("| `RATE_LIMIT_PER_MINUTE` | a whole number >= 0 | `600` |");
    expect(table).toContain("| `TOOL_SECRETS_KEY` (secret) |");
  });

  it("refuses a README without its markers", () => {
    expect(() => withEnvTable("# no table here\n", "x")).toThrow(/markers/);
  });
});
