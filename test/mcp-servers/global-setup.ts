// Starts the MCP servers the workers tests talk to (real servers over real sockets; the tests in
// workerd reach them on 127.0.0.1, which ALLOW_LOOPBACK_TOOLS permits there) and stops them after.
import type { TestProject } from "vitest/node";
import { startEverythingServer } from "./everything-server";
import { startFixtureServer } from "./fixture-server";

declare module "vitest" {
  export interface ProvidedContext {
    mcpFixturePort: number;
    mcpEverythingPort: number;
  }
}

export default async function setup(project: TestProject) {
  const [fixture, everything] = await Promise.all([startFixtureServer(), startEverythingServer()]);
  project.provide("mcpFixturePort", fixture.port);
  project.provide("mcpEverythingPort", everything.port);
  return async () => {
    everything.child.kill();
    await new Promise((r) => fixture.server.close(r));
  };
}
