import { readFileSync } from "node:fs";
import { defineProject } from "vitest/config";
import { MAX_WORKERS } from "../parallelism";

export default defineProject({
  // *.txt imports are Text modules, as wrangler bundles them (its default rule): the file's text.
  plugins: [
    {
      name: "text-modules",
      enforce: "pre",
      load(id) {
        const path = id.split("?")[0];
        return path.endsWith(".txt") ? `export default ${JSON.stringify(readFileSync(path, "utf8"))};` : null;
      },
    },
  ],
  test: {
    name: "unit",
    include: ["test/unit/**/*.test.ts"],
    environment: "node",
    maxWorkers: MAX_WORKERS,
    root: new URL("../..", import.meta.url).pathname,
  },
});
