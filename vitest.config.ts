// Three projects: pure code in Node, workerd integration tests, and end-to-end tests against
// the real local stack (what `npm start` starts).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["./test/unit/vitest.config.ts", "./test/workers/vitest.config.ts", "./test/e2e/vitest.config.ts"],
  },
});
