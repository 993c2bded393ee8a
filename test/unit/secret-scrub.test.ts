// A tool's secret header values never reach a transcript or a stored error in part: text is
// scrubbed whole and cut afterwards (a secret the cut split would no longer match, and its first
// part would stay), and a secret written as a JSON encoder or a URL writes it (`\/`, `\u002B`,
// `%2B`) is withheld too. Both for HTTP tools and for MCP servers (errors stored and returned,
// call results, tool lists).
import { afterEach, describe, expect, it, vi } from "vitest";
import { callHttpTool, type HttpToolSpec, scrub } from "../../services/tools/http-call";
import type { McpListing } from "../../services/mcp/servers";
import { mcpServerRow } from "./mcp-server-row";

const TOKEN = "sk_live_0123456789abcdefghijklmnopqrstuvw";
/** A base64 token: both '/' and '+' in it, which PHP and .NET escape in JSON by default. */
const B64 = "dGVzdC10b2tlbi/+c2VjcmV0+/YWJjZGVmZ2hpams=";

const row = mcpServerRow({ name: "fx", authSealed: "sealed" });
const saved: McpListing[] = [];
let mcpAuth = `Bearer ${TOKEN}`;
/** What the stand-in MCP connection does: fail to connect with `fail`, or list `tools` and answer `answer`. */
const server: { fail?: string; tools?: unknown[]; answer?: string } = {};

vi.mock("../../services/tools/secret-box", async (orig) => ({
  ...(await orig<typeof import("../../services/tools/secret-box")>()),
  open: async () => JSON.stringify({ name: "authorization", value: mcpAuth }),
}));
vi.mock("../../services/mcp/servers", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/servers")>()),
  getMcpServer: async () => row,
  saveMcpListing: async (_db: unknown, { listing }: { listing: McpListing }) => {
    saved.push(listing);
    return row;
  },
}));
vi.mock("../../services/mcp/connect", async (orig) => ({
  ...(await orig<typeof import("../../services/mcp/connect")>()),
  connectMcp: async (_env: unknown, endpoint: { auth: { name: string; value: string } | null }) => {
    if (server.fail) throw new Error(server.fail);
    return {
      transport: "streamable-http",
      secret: endpoint.auth ? { [endpoint.auth.name]: endpoint.auth.value } : {},
      guard: <T>(work: Promise<T>) => work,
      close: async () => {},
      client: {
        listTools: async () => ({ tools: server.tools ?? [] }),
        callTool: async () => ({ content: [{ type: "text", text: server.answer ?? "" }] }),
      },
    };
  },
}));

const spec = (auth: string): HttpToolSpec => ({
  name: "echo",
  endpoint: "https://tool.example.com/echo",
  headers: { authorization: auth },
  timeoutMs: 5_000,
  maxResponseBytes: 100_000,
  idempotent: false,
  retries: 0,
});
const call = (auth: string) =>
  callHttpTool(spec(auth), { input: {}, ids: { conversationId: "conv_x" }, allowLoopback: false });
const answering = (status: number, body: string) => vi.stubGlobal("fetch", async () => new Response(body, { status }));
/** The longest start of `secret` (8 characters or more) found in `text`, or "". */
const leakedPrefix = (text: string, secret: string) => {
  for (let n = secret.length; n >= 8; n--) if (text.includes(secret.slice(0, n))) return secret.slice(0, n);
  return "";
};

afterEach(() => {
  vi.unstubAllGlobals();
  saved.length = 0;
  mcpAuth = `Bearer ${TOKEN}`;
  for (const k of Object.keys(server)) delete server[k as keyof typeof server];
});

describe("an HTTP tool's secret", () => {
  it("is withheld from an error body even where the 500-character cut falls inside it", async () => {
    answering(400, `${"e".repeat(440)} got authorization: Bearer ${TOKEN}`);
    const out = await call(`Bearer ${TOKEN}`);
    expect(out.isError).toBe(true);
    expect(leakedPrefix(out.content, TOKEN)).toBe("");
    expect(out.content).toContain("got authorization: [authorization withheld]");
  });

  it.each([
    ["'/' escaped as '\\/' (PHP)", JSON.stringify(B64).slice(1, -1).replaceAll("/", "\\/")],
    ["'+' escaped as '\\u002B' (.NET)", B64.replaceAll("+", "\\u002B")],
    ["'+' escaped as '\\u002b'", B64.replaceAll("+", "\\u002b")],
    ["both escaped", B64.replaceAll("/", "\\/").replaceAll("+", "\\u002B").replaceAll("=", "\\u003d")],
    ["percent-encoded", encodeURIComponent(B64)],
  ])("is withheld from a JSON echo with %s", async (_, echoed) => {
    answering(200, `{"headers":{"authorization":"Bearer ${echoed}"}}`);
    const ok = await call(`Bearer ${B64}`);
    expect(ok.content).toBe(`{"headers":{"authorization":"[authorization withheld]"}}`);
    answering(400, `{"error":"bad token ${echoed}"}`);
    const failed = await call(`Bearer ${B64}`);
    expect(failed.content).toBe(`echo: HTTP 400: {"error":"bad token [authorization withheld]"}`);
  });

  it("is withheld whatever characters a secret holds", () => {
    const odd = 'a"b\\c/d+e é😀 z';
    const echoed = JSON.stringify({ v: odd });
    expect(scrub(echoed, { "x-key": odd })).toBe('{"v":"[x-key withheld]"}');
    expect(
      scrub(
        JSON.stringify({ v: odd }).replace(
          /[^\x20-\x7e]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
        ),
        { "x-key": odd },
      ),
    ).toBe('{"v":"[x-key withheld]"}');
  });

  it("is withheld whole however short, past three characters; its words only from eight", () => {
    expect(scrub("your key was k3y-77x", { "x-api-key": "k3y-77x" })).toBe("your key was [x-api-key withheld]");
    expect(scrub("pin 4096 ok", { "x-pin": "4096" })).toBe("pin [x-pin withheld] ok");
    // A value of three characters would match ordinary text: it is left, as is a short word of a longer value.
    expect(scrub("v1 of abc", { "x-v": "abc" })).toBe("v1 of abc");
    expect(scrub("Bearer sk_0123456789 and Bearer", { authorization: "Bearer sk_0123456789" })).toBe(
      "[authorization withheld] and Bearer",
    );
  });
});

describe("an MCP server's auth header", () => {
  // The 300-character cut falls 14 characters into the token.
  const longError = `${"e".repeat(250)} server said: authorization: Bearer ${TOKEN}`;

  it("is withheld from the stored listing error even where the 300-character cut falls inside it", async () => {
    server.fail = longError;
    const { refreshListing } = await import("../../services/mcp/listing");
    await refreshListing({ DB: {} } as unknown as Env, row);
    expect(saved).toHaveLength(1);
    expect(saved[0].error).toContain("server said: authorization: [authorization with");
    expect(leakedPrefix(saved[0].error ?? "", TOKEN)).toBe("");
  }, 30_000); // the first import of the MCP client builds its module graph: slow on a loaded machine

  /** A call of the fake server's one tool, as a turn makes it (the client module loaded on first use). */
  const callServerTool = async () => {
    const { callMcpTool } = await import("../../services/mcp/call");
    return callMcpTool({ DB: {} } as unknown as Env, { tenantId: "t", serverId: "mcp_x", mcpName: "x", args: {} });
  };

  it("is withheld from a call's error even where the cut falls inside it", async () => {
    server.fail = longError;
    const out = await callServerTool();
    expect(out.isError).toBe(true);
    expect(out.content).toContain("server said: authorization: [authorization with");
    expect(leakedPrefix(out.content, TOKEN)).toBe("");
  }, 30_000);

  it("is withheld from a call's result in its JSON-escaped forms", async () => {
    mcpAuth = `Bearer ${B64}`;
    server.answer = `{"auth":"Bearer ${B64.replaceAll("/", "\\/").replaceAll("+", "\\u002B")}"}`;
    const out = await callServerTool();
    expect(out.content).toBe(`{"auth":"[authorization withheld]"}`);
  }, 30_000);

  it("is withheld from the tool list: descriptions (before their cut), schemas, and names", async () => {
    server.tools = [
      {
        name: "whoami",
        description: `${"d".repeat(980)} Bearer ${TOKEN}`,
        inputSchema: { type: "object", properties: { auth: { type: "string", default: TOKEN } } },
      },
      { name: `tool_${TOKEN}`, description: "named after the secret", inputSchema: { type: "object" } },
    ];
    const { refreshListing } = await import("../../services/mcp/listing");
    await refreshListing({ DB: {} } as unknown as Env, row);
    const [listing] = saved;
    const text = JSON.stringify(listing);
    expect(leakedPrefix(text, TOKEN)).toBe("");
    expect(listing.tools.map((t) => t.mcpName)).toEqual(["whoami"]);
    expect(listing.tools[0].inputSchema).toEqual({
      type: "object",
      properties: { auth: { type: "string", default: "[authorization withheld]" } },
    });
    expect(listing.error).toBe("1 tool left out: a name holding the server's auth header");
  }, 30_000);
});
