// A server's tool list refresh (its registration, a refresh) waits its timeoutMs once in all:
// connecting and listing share one deadline, so a slow connect leaves the list only the rest.
import { expect, it, vi } from "vitest";
import { mcpServerRow } from "./mcp-server-row";

const TIMEOUT_MS = 600;
const CONNECT_MS = 400;
const row = mcpServerRow({ timeoutMs: TIMEOUT_MS });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const seen: { deadline?: number; listMs?: number } = {};

vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => row,
  saveMcpListing: async () => row,
}));
vi.mock("../../services/mcp/connect", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/connect")>()),
  connectMcp: async (_env: unknown, _endpoint: unknown, opts: { timeoutMs: number; deadline?: number }) => {
    seen.deadline = opts.deadline;
    await sleep(CONNECT_MS);
    return {
      transport: "streamable-http",
      guard: <T>(work: Promise<T>) => work,
      close: async () => {},
      client: {
        listTools: async (_params: unknown, options: { timeout: number }) => {
          seen.listMs = options.timeout;
          return { tools: [] };
        },
      },
    };
  },
}));

it("gives the list only the time connecting left of the server's timeoutMs", async () => {
  const { refreshListing } = await import("../../services/mcp/listing");
  const started = Date.now();
  await refreshListing({ DB: {} } as unknown as Env, row);
  expect(seen.deadline).toBeGreaterThanOrEqual(started + TIMEOUT_MS);
  expect(seen.deadline).toBeLessThanOrEqual(Date.now() + TIMEOUT_MS);
  // Connecting took at least CONNECT_MS of the 600: the list gets at most the rest.
  expect(seen.listMs).toBeLessThanOrEqual(TIMEOUT_MS - CONNECT_MS + 20);
});
