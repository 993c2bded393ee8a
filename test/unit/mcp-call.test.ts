// An MCP call whose server announced tools/list_changed during it: the list refresh that follows
// may fail (the server went away, a page timed out), but the call's own answer stands.
import { expect, it, vi } from "vitest";
import { mcpServerRow } from "./mcp-server-row";

const row = mcpServerRow({});
vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => row,
  saveMcpListing: async () => row,
}));
vi.mock("../../services/mcp/listing", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/listing")>()),
  endpointOf: async () => ({ url: row.url, auth: null }),
  listWith: async () => {
    throw new Error("listing tools took longer than 5000 ms");
  },
}));
vi.mock("../../services/mcp/connect", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/connect")>()),
  connectMcp: async (_env: unknown, _endpoint: unknown, opts: { onToolsChanged?: () => void }) => ({
    transport: "streamable-http",
    guard: <T>(work: Promise<T>) => work,
    close: async () => {},
    client: {
      callTool: async () => {
        opts.onToolsChanged?.();
        return { content: [{ type: "text", text: "sum=42" }] };
      },
    },
  }),
}));

it("keeps a call's answer when the list refresh its list_changed asked for fails", async () => {
  const { callMcpTool } = await import("../../services/mcp/call");
  const out = await callMcpTool({ DB: {} } as unknown as Env, {
    tenantId: "t",
    serverId: "mcp_x",
    mcpName: "add",
    args: {},
  });
  expect(out).toEqual({ content: "sum=42", listChanged: true });
}, 30_000); // the first import of the MCP client builds its module graph: slow on a loaded machine
