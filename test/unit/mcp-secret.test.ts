// An MCP server that echoes the request (a "whoami" tool, an error page) must not put its sealed
// auth header into a tool result: the transcript, exports and the next model requests would hold it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { mcpServerRow } from "./mcp-server-row";

const SECRET = "Bearer mcp-live-secret-0123456789";
let url = "";

vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => mcpServerRow({ name: "echo", url, authSealed: "sealed" }),
}));
vi.mock("../../services/mcp/listing", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/listing")>()),
  endpointOf: async () => ({ url, auth: { name: "authorization", value: SECRET } }),
}));

let server: Server;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const msg = JSON.parse(body);
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === "initialize"
          ? {
              protocolVersion: msg.params.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: "e", version: "1" },
            }
          : // A "whoami"-style tool: it tells what the request carried.
            { content: [{ type: "text", text: `you sent authorization: ${req.headers.authorization}` }] };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise((r) => server.close(r)));

it("withholds the server's auth header, and its token, from a result that echoes them", async () => {
  const { callMcpTool } = await import("../../services/mcp/call");
  const out = await callMcpTool({ ALLOW_LOOPBACK_TOOLS: "true", DB: {} } as unknown as Env, {
    tenantId: "t",
    serverId: "mcp_x",
    mcpName: "whoami",
    args: {},
  });
  expect(out.content).toBe("you sent authorization: [authorization withheld]");
}, 30_000); // the first import of the MCP client builds its module graph: slow on a loaded machine
