// Five projects: pure code in Node (most files sharing a module graph, the few that replace a
// module or a global each in their own: test/unit/isolation.ts), workerd integration tests (most
// files sharing a workerd, the few that need empty storage each in their own:
// test/workers/project.ts), and end-to-end tests against the real local stack (what `npm start`
// starts; one file at a time, run after the rest).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      "./test/unit/vitest.config.ts",
      "./test/unit/vitest.isolated.config.ts",
      "./test/workers/vitest.config.ts",
      "./test/workers/vitest.isolated.config.ts",
      "./test/e2e/vitest.config.ts",
    ],
  },
});
