// Starts the real local stack once for the e2e project (throwaway state, a free port) and stops
// it afterwards. Tests read the base URL with inject("baseUrl").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startStack } from "../../scripts/stack.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const persistTo = mkdtempSync(join(tmpdir(), "context-chat-e2e-"));
  // The suites fire many requests with the dev key; security.test.ts checks the limits on a stack of its own.
  const stack = await startStack({
    persistTo,
    vars: { RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "0", TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0" },
  });
  project.provide("baseUrl", stack.baseUrl);
  return async () => {
    await stack.stop();
    rmSync(persistTo, { recursive: true, force: true });
  };
}
