// The unit projects' shared configuration: pure code in Node. Two projects use it (root
// vitest.config.ts): "unit", whose files share one module graph per worker (isolate: false), and
// "unit-isolated", the files that replace a module or a global, each in a fresh one (isolation.ts).
import { readFileSync } from "node:fs";
import { defineProject } from "vitest/config";
import { MAX_WORKERS } from "../parallelism";
import { filesThatReplaceModules } from "./isolation";

export function unitProject({ name, isolate }: { name: string; isolate: boolean }) {
  const replacing = filesThatReplaceModules();
  return defineProject({
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
      name,
      include: isolate ? replacing : ["test/unit/**/*.test.ts"],
      exclude: isolate ? [] : replacing,
      environment: "node",
      maxWorkers: MAX_WORKERS,
      isolate,
      root: new URL("../..", import.meta.url).pathname,
    },
  });
}
