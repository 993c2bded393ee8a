// MCP servers this project wrote for its tests, built with @modelcontextprotocol/sdk's own server
// classes and run in Node: one over Streamable HTTP (stateless, a new McpServer per request, so
// a tool added at run time is listed by the next request), one over the older HTTP+SSE transport
// only (the client's fallback path). Each tool exercises one mapping of a result to content blocks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/** A 1x1 PNG: small enough for the image rules, real enough for a media-type sniff. */
export const PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
export const FIXTURE_TOKEN = "Bearer fixture-secret-token";

/** Tools added by the "grow" tool while the server runs (what tools/list_changed announces). */
const grown: string[] = [];

function fixtureServer(): McpServer {
  const server = new McpServer({ name: "context-chat-fixture", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: "text", text: `sum=${a + b}` }],
    }),
  );
  server.registerTool("pixel", { description: "Returns a one-pixel PNG image" }, async () => ({
    content: [
      { type: "text", text: "a pixel:" },
      { type: "image", data: PIXEL_PNG, mimeType: "image/png" },
    ],
  }));
  server.registerTool("fake_image", { description: "Returns bytes that claim to be a PNG but are not" }, async () => ({
    content: [{ type: "image", data: Buffer.from("not an image at all").toString("base64"), mimeType: "image/png" }],
  }));
  server.registerTool("links", { description: "Returns a resource link and an embedded text resource" }, async () => ({
    content: [
      { type: "resource_link", uri: "file:///docs/guide.md", name: "guide.md", mimeType: "text/markdown" },
      {
        type: "resource",
        resource: { uri: "file:///docs/notes.txt", mimeType: "text/plain", text: "embedded notes body" },
      },
    ],
  }));
  server.registerTool(
    "big",
    { description: "Returns a large text of n kilobytes", inputSchema: { kb: z.number().int().min(1).max(2048) } },
    async ({ kb }) => ({
      content: [{ type: "text", text: `BIG-START ${"x".repeat(kb * 1024)} BIG-END` }],
    }),
  );
  server.registerTool(
    "oversized",
    {
      description: "Returns a text of mb mebibytes, past what one MCP message may carry",
      inputSchema: { mb: z.number().int().min(1).max(16) },
    },
    async ({ mb }) => ({
      content: [{ type: "text", text: `OVERSIZED ${"y".repeat(mb * 1024 * 1024)}` }],
    }),
  );
  server.registerTool("fail", { description: "Always reports a tool error" }, async () => ({
    content: [{ type: "text", text: "the fixture failed on purpose" }],
    isError: true,
  }));
  server.registerTool(
    "slow",
    { description: "Answers after ms milliseconds", inputSchema: { ms: z.number().int() } },
    async ({ ms }) => {
      await new Promise((r) => setTimeout(r, ms));
      return { content: [{ type: "text", text: "finally" }] };
    },
  );
  server.registerTool(
    "grow",
    { description: "Adds a tool named by the caller and announces the new list", inputSchema: { name: z.string() } },
    async ({ name }, extra) => {
      if (!grown.includes(name)) grown.push(name);
      // Sent on this request's stream, so a client that connects per call still hears it.
      await extra.sendNotification({ method: "notifications/tools/list_changed" });
      return { content: [{ type: "text", text: `grew ${name}` }] };
    },
  );
  for (const name of grown)
    server.registerTool(name, { description: `A tool grown at run time: ${name}` }, async () => ({
      content: [{ type: "text", text: `${name} ran` }],
    }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

async function streamable(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { json?: boolean; body?: unknown } = {},
): Promise<void> {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const server = fixtureServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: opts.json ?? false,
  });
  res.on("close", () => void server.close());
  await server.connect(transport);
  await transport.handleRequest(req, res, "body" in opts ? opts.body : await readBody(req));
}

/** The most a flood answer writes, and what the last one wrote before its reader went away (GET /flood/written). */
const FLOOD_BYTES = 32 * 1024 * 1024;
let floodWritten = 0;

/**
 * Streamable HTTP whose every answer to one method (?on=, tools/call unless told) is one event
 * that never ends: FLOOD_BYTES of a result's first characters, written as fast as the reader takes
 * them, then the connection closes. A client that buffers the whole event before looking at it
 * reads all of it; one that counts as it reads stops early, and the server sees it hang up.
 */
async function flood(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = req.method === "POST" ? await readBody(req) : undefined;
  const call = body as { method?: string; id?: number } | undefined;
  const on = new URL(req.url ?? "/", "http://x").searchParams.get("on") ?? "tools/call";
  if (call?.method !== on) return streamable(req, res, { body });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${call.id},"result":{"content":[{"type":"text","text":"`);
  floodWritten = 0;
  const chunk = Buffer.alloc(64 * 1024, "z");
  let closed = false;
  res.on("close", () => (closed = true));
  while (!closed && floodWritten < FLOOD_BYTES) {
    floodWritten += chunk.length;
    if (!res.write(chunk))
      await new Promise<void>((resolve) => {
        const go = () => (res.off("drain", go), res.off("close", go), resolve());
        res.on("drain", go).on("close", go);
      });
  }
  res.end();
}

/** HTTP+SSE (protocol 2024-11-05): GET opens the event stream, POST /messages?sessionId= carries requests. */
const sseSessions = new Map<string, SSEServerTransport>();
async function sseOnly(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (req.method === "GET" && path === "/sse") {
    const transport = new SSEServerTransport("/messages", res);
    sseSessions.set(transport.sessionId, transport);
    res.on("close", () => sseSessions.delete(transport.sessionId));
    await fixtureServer().connect(transport);
    return;
  }
  if (req.method === "POST" && path === "/messages") {
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("sessionId") ?? "";
    const transport = sseSessions.get(id);
    if (!transport) {
      res.writeHead(404).end();
      return;
    }
    await transport.handlePostMessage(req, res, await readBody(req));
    return;
  }
  res.writeHead(404).end();
}

/**
 * One HTTP server: /mcp (Streamable HTTP), /json/mcp (the same, answering plain JSON rather than
 * an event stream), /private/mcp (behind an auth header), /flood/mcp (a tools/call answer, or
 * ?on= another method's, far past any cap; /flood/written says how much of it went out), /sse and
 * /messages (SSE only), /redirect (a 307 to a private address, which the client must not follow).
 */
export async function startFixtureServer(): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const handle = async () => {
      if (path === "/mcp") return streamable(req, res);
      if (path === "/json/mcp") return streamable(req, res, { json: true });
      if (path === "/flood/mcp") return flood(req, res);
      if (path === "/flood/written")
        return void res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ written: floodWritten, total: FLOOD_BYTES }));
      if (path === "/private/mcp") {
        if (req.headers.authorization !== FIXTURE_TOKEN)
          return void res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
        return streamable(req, res);
      }
      if (path === "/redirect") return void res.writeHead(307, { location: "http://10.0.0.1/mcp" }).end();
      return sseOnly(req, res, path);
    };
    handle().catch((err) => {
      console.error("fixture MCP server", err);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, server };
}
