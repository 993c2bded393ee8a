// An MCP call whose server announced tools/list_changed during it: the list refresh that follows
// may fail (the server went away, a page timed out), but the call's own answer stands, and the
// failure is logged without the server's auth header, which its answer may echo.
import { expect, it, vi } from "vitest";
import { mcpServerRow } from "./mcp-server-row";

const row = mcpServerRow({});
const SECRET = "Bearer mcp-secret-9f8e7d6c";
vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => row,
  saveMcpListing: async () => row,
}));
vi.mock("../../services/mcp/listing", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/listing")>()),
  endpointOf: async () => ({ url: row.url, auth: { name: "authorization", value: SECRET } }),
  listWith: async () => {
    throw new Error(`Error POSTing to endpoint: debug: request headers: authorization=${SECRET}`);
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

it("keeps a call's answer when the list refresh its list_changed asked for fails, and logs no secret", async () => {
  const logged: string[] = [];
  const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    logged.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
  });
  const { callMcpTool } = await import("../../services/mcp/call");
  const out = await callMcpTool({ DB: {} } as unknown as Env, {
    tenantId: "t",
    serverId: "mcp_x",
    mcpName: "add",
    args: {},
  });
  spy.mockRestore();
  expect(out).toEqual({ content: "sum=42", listChanged: true });
  expect(logged.join("\n")).toContain("did not refresh");
  expect(logged.join("\n")).not.toContain("mcp-secret-9f8e7d6c");
}, 30_000); // the first import of the MCP client builds its module graph: slow on a loaded machine
