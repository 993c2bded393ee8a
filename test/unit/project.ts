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
      // `npm test` runs these beside workerd and the browser on the same cores, where a test of
      // 2-3 s alone takes twice that: vitest's 5 s default failed such tests one at a time, CI run
      // after CI run. Time is measured by the benches (`npm run bench`), never by a test's timeout.
      testTimeout: 30_000,
      isolate,
      root: new URL("../..", import.meta.url).pathname,
    },
  });
}
