// A tool's result cap is on what is stored: the text with its secret header values withheld. Each
// match of a 4-character value becomes "[<header name> withheld]" (a name of up to 64 characters),
// so a 1,000,000-byte answer of "k3y9 " checked before withholding was stored as 15.2 MB.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MCP_MAX_RESULT_TEXT_BYTES } from "../../core/tenant-tool-rules";
import { callHttpTool } from "../../services/tools/http-call";
import { mcpServerRow } from "./mcp-server-row";

const HEADER = `x-${"a".repeat(62)}`;
const VALUE = "k3y9";
const LABEL = `[${HEADER} withheld]`;
/** 1,000,000 bytes: within the 1 MiB cap as sent, 15.2 MB once every value is withheld. */
const ECHOES = `${VALUE} `.repeat(200_000);

let answer = "";
vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => mcpServerRow({ name: "echoer", authSealed: "sealed" }),
}));
vi.mock("../../services/mcp/listing", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/listing")>()),
  endpointOf: async () => ({ url: "https://mcp.example.com/mcp", auth: { name: HEADER, value: VALUE } }),
}));
vi.mock("../../services/mcp/connect", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/connect")>()),
  connectMcp: async () => ({
    transport: "streamable-http",
    guard: <T>(work: Promise<T>) => work,
    close: async () => {},
    client: { callTool: async () => ({ content: [{ type: "text", text: answer }] }) },
  }),
}));

const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

async function callEcho() {
  const { callMcpTool } = await import("../../services/mcp/call");
  return callMcpTool({ DB: {} } as unknown as Env, { tenantId: "t", serverId: "mcp_x", mcpName: "echo", args: {} });
}

describe("an MCP tool's result that echoes the server's auth value", () => {
  it("past 1 MiB once withheld is an error result naming both sizes, none of it kept", async () => {
    answer = ECHOES;
    expect(bytes(answer)).toBeLessThanOrEqual(MCP_MAX_RESULT_TEXT_BYTES);
    const out = await callEcho();
    expect(out.isError).toBe(true);
    expect(out.content).toBe(
      `MCP tool echo on "echoer" returned 1000000 bytes of text (${200_000 * (LABEL.length + 1)} with its auth value withheld), more than the ${MCP_MAX_RESULT_TEXT_BYTES} one MCP tool result may hold; none of it is kept`,
    );
  }, 30_000); // the first import of the MCP client builds its module graph: slow on a loaded machine

  it("within 1 MiB once withheld is kept, withheld", async () => {
    answer = `${VALUE} `.repeat(1_000);
    const out = await callEcho();
    expect(out.isError).toBeUndefined();
    expect(out.content).toBe(`${LABEL} `.repeat(1_000));
  });
});

describe("an HTTP tool's answer that echoes its header value", () => {
  afterEach(() => vi.unstubAllGlobals());
  const call = (body: string, maxResponseBytes: number) => {
    vi.stubGlobal("fetch", async () => new Response(body));
    return callHttpTool(
      {
        name: "echo",
        endpoint: "https://tool.example.com/echo",
        headers: { [HEADER]: VALUE },
        timeoutMs: 5_000,
        maxResponseBytes,
        idempotent: false,
        retries: 0,
      },
      { input: {}, ids: { conversationId: "conv_x" }, allowLoopback: false },
    );
  };

  it("past maxResponseBytes once withheld is the documented error, none of it kept", async () => {
    // 1,000 bytes as sent (the tool's cap), 15,200 once withheld.
    const out = await call(`${VALUE} `.repeat(200), 1_000);
    expect(out).toEqual({
      content: "echo: response larger than 1000 bytes (the tool's maxResponseBytes) with its header values withheld",
      isError: true,
      attempts: 1,
    });
  });

  it("within maxResponseBytes once withheld is kept, withheld", async () => {
    const out = await call(`${VALUE} `.repeat(10), 1_000);
    expect(out).toEqual({ content: `${LABEL} `.repeat(10), isError: false, attempts: 1 });
  });

  it("past maxResponseBytes as sent is the error it always was", async () => {
    const out = await call("x".repeat(1_001), 1_000);
    expect(out.content).toBe("echo: response larger than 1000 bytes (the tool's maxResponseBytes)");
  });
});
