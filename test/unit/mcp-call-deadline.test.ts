// One MCP call waits at most its server's timeoutMs in all: connecting, the call and the list
// refresh a tools/list_changed asks for share one deadline, each step getting the time left, so a
// slow connect no longer buys the call a whole timeout of its own, nor a slow call the refresh.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { beforeEach, expect, it, vi } from "vitest";
import { mcpServerRow } from "./mcp-server-row";

const TIMEOUT_MS = 600;
/** How long connecting takes, and a call that answers: within the timeout each, not together with the other. */
const STEP_MS = 400;
const row = mcpServerRow({ timeoutMs: TIMEOUT_MS });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What each step was given, and how the fake call behaves. */
const seen: { connectMs?: number; callMs?: number; listMs?: number } = {};
let callAnswers = false;
let connectDelayMs = 0;

vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => row,
  saveMcpListing: async () => row,
}));
vi.mock("../../services/mcp/listing", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/listing")>()),
  endpointOf: async () => ({ url: row.url }),
  // A server that never finishes its list: the refresh ends when the time it was given runs out.
  listWith: async (_conn: unknown, _server: string, timeoutMs: number) => {
    seen.listMs = timeoutMs;
    await sleep(timeoutMs);
    throw new Error(`listing tools took longer than ${timeoutMs} ms`);
  },
}));
vi.mock("../../services/mcp/connect", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/connect")>()),
  connectMcp: async (_env: unknown, _endpoint: unknown, opts: { timeoutMs: number; onToolsChanged?: () => void }) => {
    seen.connectMs = opts.timeoutMs;
    await sleep(connectDelayMs);
    return {
      transport: "streamable-http",
      guard: <T>(work: Promise<T>) => work,
      close: async () => {},
      client: {
        // As the SDK does: a request with no answer within `timeout` fails with RequestTimeout.
        callTool: async (_params: unknown, options: { timeout: number }) => {
          seen.callMs = options.timeout;
          if (callAnswers) {
            await sleep(STEP_MS);
            opts.onToolsChanged?.();
            return { content: [{ type: "text", text: "sum=42" }] };
          }
          await sleep(options.timeout);
          throw new McpError(ErrorCode.RequestTimeout, "Request timed out");
        },
      },
    };
  },
}));

const call = async () => {
  const { callMcpTool } = await import("../../services/mcp/call");
  const out = await callMcpTool({ DB: {} } as unknown as Env, {
    tenantId: "t",
    serverId: "mcp_x",
    mcpName: "add",
    args: {},
  });
  return { out };
};

beforeEach(() => {
  for (const k of Object.keys(seen) as (keyof typeof seen)[]) delete seen[k];
});

it("gives the call only the time connecting left, and names the tool's timeoutMs when it runs out", async () => {
  callAnswers = false;
  connectDelayMs = STEP_MS;
  await call(); // the first import of the MCP client builds its module graph: not timed
  const { out } = await call();
  expect(out).toEqual({ content: `MCP tool add on "fx" failed: no answer within ${TIMEOUT_MS} ms`, isError: true });
  expect(seen.connectMs).toBeLessThanOrEqual(TIMEOUT_MS);
  expect(seen.callMs).toBeLessThanOrEqual(TIMEOUT_MS - STEP_MS + 20);
}, 30_000);

it("gives a list refresh after list_changed only the time the call left, and keeps the call's answer", async () => {
  callAnswers = true;
  connectDelayMs = 0;
  await call();
  const spy = vi.spyOn(console, "error").mockImplementation(() => {});
  const { out } = await call();
  spy.mockRestore();
  expect(out).toEqual({ content: "sum=42", listChanged: true });
  expect(seen.callMs).toBeLessThanOrEqual(TIMEOUT_MS);
  expect(seen.listMs).toBeLessThanOrEqual(TIMEOUT_MS - STEP_MS + 20);
}, 30_000);
