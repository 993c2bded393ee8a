// A connection to a tenant's MCP server through the official SDK client. Transport is automatic:
// Streamable HTTP first, then the older HTTP+SSE transport at the same URL when the server
// refuses the first (the SDK's documented backwards-compatibility pattern). Every request — each
// redirect hop included — goes through checkedFetch, so a server cannot send the platform to a
// private address, and the auth header only ever travels in request headers. Every answer is
// counted as it arrives (message-cap.ts), and whatever a connection waits for ends as soon as one
// message passes the cap.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { checkOutboundUrl, loopbackAllowed } from "../../core/outbound-url";
import { MCP_MAX_MESSAGE_BYTES, MCP_RESERVED_HEADERS } from "../../core/tenant-tool-rules";
import { z } from "zod";
import { withheldAndCut } from "../tools/http-call";
import { capMessages, McpMessageTooLarge } from "./message-cap";

export type McpTransportKind = "streamable-http" | "sse";

export interface McpEndpoint {
  url: string;
  /** The opened auth header, if the server has one. */
  auth: { name: string; value: string } | null;
}

/** The endpoint's auth header as a header map (empty without one): what is sent, and what is withheld from echoes. */
export const authHeaders = (endpoint: McpEndpoint): Record<string, string> =>
  endpoint.auth ? { [endpoint.auth.name]: endpoint.auth.value } : {};

export class OutboundRefused extends Error {}

/**
 * Every outbound request of an MCP connection: the URL checked, redirects never followed by fetch
 * itself, and, given a cap, each answer's messages counted as they are read (message-cap.ts).
 */
export function checkedFetch(
  env: { ALLOW_LOOPBACK_TOOLS?: string },
  cap?: { limit: number; onOver: (err: McpMessageTooLarge) => void },
): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const check = checkOutboundUrl(url, { allowLoopback: loopbackAllowed(env) });
    if (!check.ok) throw new OutboundRefused(`refused ${new URL(url).origin}: ${check.reason}`);
    const res = await fetch(input, { ...init, redirect: "manual" });
    return cap ? capMessages(res, cap.limit, cap.onOver) : res;
  }) as typeof fetch;
}

/**
 * The SDK checks a tool's structured output against its outputSchema with Ajv, which compiles
 * schemas with `new Function` — refused by deployed Workers. The platform hands the model the
 * result's content blocks, never structuredContent, so it takes structured output as it comes.
 */
const acceptStructuredOutput: jsonSchemaValidator = {
  getValidator:
    <T>(): JsonSchemaValidator<T> =>
    (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined }),
};

/**
 * Answers as the platform asks for them: any JSON object. The SDK's own result schemas are strict,
 * so one tool with a schema they refuse (`{}` without a type, `required: "a"`) or one content block
 * of a type they do not know fails the whole list or call with a validator's dump; the platform
 * judges each tool (listing.ts) and each block (results.ts) by itself instead.
 */
const AnyResult = z.looseObject({});
export type McpAnswer = z.infer<typeof AnyResult>;

/** The two requests the platform makes of a server, each answered as it came. */
export interface McpTools {
  listTools(params: { cursor?: string }, options: RequestOptions): Promise<McpAnswer>;
  callTool(params: { name: string; arguments: Record<string, unknown> }, options: RequestOptions): Promise<McpAnswer>;
}

export interface McpConnection {
  client: McpTools;
  transport: McpTransportKind;
  /** The auth header this connection sends, as a header map (empty without one): withheld from whatever the server says. */
  secret: Record<string, string>;
  /**
   * `work` (a request of this connection), ended at once by a message past the cap: the SDK only
   * sees a broken stream, and would wait for its answer until the timeout.
   */
  guard<T>(work: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function connectMcp(
  env: { ALLOW_LOOPBACK_TOOLS?: string },
  endpoint: McpEndpoint,
  opts: {
    timeoutMs: number;
    /** When connecting must be done by (ms since the epoch): a call's deadline, shared with its later steps. Default: timeoutMs from now. */
    deadline?: number;
    onToolsChanged?: () => void;
  },
): Promise<McpConnection> {
  // Both transports' attempts within the one deadline: a slow failing first attempt leaves the second only the rest.
  const deadline = opts.deadline ?? Date.now() + opts.timeoutMs;
  const timedOut = () => new McpTimeout(`connecting took longer than ${opts.timeoutMs} ms`);
  const check = checkOutboundUrl(endpoint.url, { allowLoopback: loopbackAllowed(env) });
  if (!check.ok) throw new OutboundRefused(`url: ${check.reason}`);
  const secret = authHeaders(endpoint);
  // A server saved before its auth header's name was refused (a transport or hop-by-hop header)
  // connects without it: sent, an `Upgrade` broke every request; the secret is still withheld.
  const sendable = endpoint.auth && !MCP_RESERVED_HEADERS.includes(endpoint.auth.name.toLowerCase());
  const init: RequestInit = sendable ? { headers: secret } : {};
  let over: McpMessageTooLarge | undefined;
  let overflowed!: (err: McpMessageTooLarge) => void;
  const tooLarge = new Promise<never>((_, reject) => (overflowed = reject));
  tooLarge.catch(() => undefined);
  const onOver = (err: McpMessageTooLarge) => {
    over ??= err;
    overflowed(over);
  };
  const guard = async <T>(work: Promise<T>): Promise<T> => {
    try {
      return await Promise.race([work, tooLarge]);
    } catch (err) {
      // The stream's error may reach the SDK in another shape (a failed json(), a parse error).
      throw over ?? err;
    }
  };
  const transportOpts = { fetch: checkedFetch(env, { limit: MCP_MAX_MESSAGE_BYTES, onOver }), requestInit: init };
  const attempt = async (kind: McpTransportKind): Promise<McpConnection> => {
    const client = new Client(
      { name: "context-chat", version: "1.0.0" },
      { jsonSchemaValidator: acceptStructuredOutput },
    );
    if (opts.onToolsChanged)
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => opts.onToolsChanged!());
    const transport: Transport =
      kind === "streamable-http"
        ? new StreamableHTTPClientTransport(check.url, transportOpts)
        : new SSEClientTransport(check.url, { ...transportOpts, eventSourceInit: { fetch: transportOpts.fetch } });
    const left = Math.max(1, deadline - Date.now());
    try {
      await withTimeout(guard(client.connect(transport, { timeout: left })), left, "connecting");
    } catch (err) {
      // A failed attempt must not leave its stream behind (an EventSource would keep reconnecting).
      await transport.close().catch(() => undefined);
      // Out of time, whoever noticed first (our timer or the SDK's): a timeout, named by timeoutMs.
      throw err instanceof McpTimeout || (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
        ? timedOut()
        : err;
    }
    const tools: McpTools = {
      listTools: (params, options) => client.request({ method: "tools/list", params }, AnyResult, options),
      callTool: (params, options) => client.request({ method: "tools/call", params }, AnyResult, options),
    };
    return {
      client: tools,
      transport: kind,
      secret,
      guard,
      close: () => closeSession(client, transport, opts.timeoutMs),
    };
  };
  try {
    return await attempt("streamable-http");
  } catch (err) {
    // A refused URL, a timeout or a message past the cap is no reason to try the other transport.
    if (err instanceof OutboundRefused || err instanceof McpTimeout || err instanceof McpMessageTooLarge) throw err;
    try {
      return await attempt("sse");
    } catch (sseErr) {
      throw new Error(
        `neither Streamable HTTP (${message(err, secret)}) nor SSE (${message(sseErr, secret)}) connected`,
      );
    }
  }
}

/**
 * How long ending a session may hold the answer it follows: the DELETE is a courtesy to the server,
 * and a server that does not answer it must not add its whole timeout to every call and listing.
 */
export const SESSION_END_MS = 1_000;

/**
 * Ends the session, then the client. A Streamable HTTP session is ended with a DELETE carrying its
 * Mcp-Session-Id (the spec's "SHOULD" for a client that is done with it): a server would otherwise
 * keep every session each call and listing opens until it expires them. A server may refuse it (405),
 * fail, or not answer; the connection closes all the same, within SESSION_END_MS.
 */
async function closeSession(client: Client, transport: Transport, timeoutMs: number): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport)
    await withTimeout(transport.terminateSession(), Math.min(timeoutMs, SESSION_END_MS), "ending the session").catch(
      () => undefined,
    );
  await client.close().catch(() => undefined);
}

export class McpTimeout extends Error {}

export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new McpTimeout(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** An error's whole text: for tests on it, never to show (it may hold the auth header). */
export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * An error's text as shown, at most 300 characters: the secret header values withheld from the
 * whole text first, then cut (a secret the cut split would no longer match, and its first part
 * would stay).
 */
export const message = (err: unknown, secret: Record<string, string>): string =>
  withheldAndCut(errorText(err), secret, 300);
