// End-to-end: starts the real local stack once (wrangler dev with both workers, as `npm start`
// does, on a free port with throwaway state) and drives it from Node over HTTP and WebSocket.
import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "e2e",
    root: new URL("../..", import.meta.url).pathname,
    include: ["test/e2e/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/e2e/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    // A page reaches a state through the stack and the browser, both slower on a busy 2-core
    // machine: an expect.poll that names no timeout waits up to 10 s for it (vitest's own is 1 s).
    expect: { poll: { timeout: 10_000 } },
  },
});
