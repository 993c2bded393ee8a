// A scriptable MCP server for workers tests, without a process of its own: globalThis.fetch is
// swapped (for the test file's lifetime) so every request to FAKE_MCP reaches these handlers, in
// the same isolate as the worker and its conversation objects. A test sets a path's tools and how
// it answers tools/call, and reads the log of what the platform sent (DELETEs included). Unlike
// the SDK-built fixture servers (test/mcp-servers), it can answer what a real SDK server never
// would: odd schemas, unknown content types, JSON-RPC errors, notifications mid-call.
import { afterAll, beforeAll, beforeEach } from "vitest";

export const FAKE_MCP = "http://127.0.0.1:9";

export interface Rpc {
  jsonrpc: string;
  id?: number;
  method: string;
  params?: Record<string, unknown>;
}

export interface FakeMcpLog {
  method: string;
  path: string;
  rpc?: string;
  session: string | null;
}

export interface FakeMcp {
  /** Each path's tools/list answer (one page), as raw JSON: anything a server might send. */
  tools: Record<string, unknown[]>;
  /** The answer to a tools/list on a path; that path's `tools` by default (a test may hold it back). */
  onList: (path: string, rpc: Rpc) => Response | Promise<Response>;
  /** The answer to a tools/call on a path; a JSON-RPC result `ok` by default. */
  onCall: (path: string, rpc: Rpc) => Response | Promise<Response>;
  log: FakeMcpLog[];
}

export const rpcResult = (id: number | undefined, result: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", id, result }), {
    headers: { "content-type": "application/json", ...headers },
  });

export const rpcError = (id: number | undefined, error: { code: number; message: string }) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", id, error }), { headers: { "content-type": "application/json" } });

/** An event-stream answer carrying these JSON-RPC messages in turn (a notification, then the result, say). */
export const rpcStream = (...messages: unknown[]) =>
  new Response(messages.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join(""), {
    headers: { "content-type": "text/event-stream" },
  });

/** Installs the fake server for the calling test file (before its tests, removed after them). */
export function installFakeMcp(): FakeMcp {
  const listDefault: FakeMcp["onList"] = (path, rpc) => rpcResult(rpc.id, { tools: fake.tools[path] ?? [] });
  const callDefault: FakeMcp["onCall"] = (_path, rpc) => rpcResult(rpc.id, { content: [{ type: "text", text: "ok" }] });
  const fake: FakeMcp = { tools: {}, onList: listDefault, onCall: callDefault, log: [] };
  const original = globalThis.fetch;
  let sessions = 0;
  const serve = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    const session = req.headers.get("mcp-session-id");
    if (req.method !== "POST") {
      fake.log.push({ method: req.method, path, session });
      // A DELETE ends the session; a GET (the optional server stream) is not offered.
      return new Response(null, { status: req.method === "DELETE" ? 200 : 405 });
    }
    const rpc = (await req.json()) as Rpc;
    fake.log.push({ method: "POST", path, rpc: rpc.method, session });
    if (rpc.id === undefined) return new Response(null, { status: 202 });
    if (rpc.method === "initialize")
      return rpcResult(
        rpc.id,
        {
          protocolVersion: rpc.params?.protocolVersion,
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "fake", version: "1" },
        },
        { "mcp-session-id": `s${++sessions}` },
      );
    if (rpc.method === "tools/list") return fake.onList(path, rpc);
    if (rpc.method === "tools/call") return fake.onCall(path, rpc);
    return rpcError(rpc.id, { code: -32601, message: `no method ${rpc.method}` });
  };
  beforeAll(() => {
    globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      return req.url.startsWith(`${FAKE_MCP}/`) ? serve(req) : original(input, init);
    }) as typeof fetch;
  });
  // Each test starts from the default answers and an empty log (its paths' tools are its own).
  beforeEach(() => {
    fake.onList = listDefault;
    fake.onCall = callDefault;
    fake.log.length = 0;
  });
  afterAll(() => {
    globalThis.fetch = original;
  });
  return fake;
}

/**
 * A gate for holding one answer back: the handler awaits `hold()` (which marks it `entered`) until
 * the test calls `release()`. Flags polled on timers, not promises: the handler runs in another
 * request's context (the worker's fetch, a conversation object), and a promise resolved from one
 * context does not wake a request waiting in another.
 */
export function gate() {
  const state = { entered: false, released: false };
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((r) => setTimeout(r, 10));
  };
  return {
    hold: async () => {
      state.entered = true;
      await until(() => state.released);
    },
    entered: () => until(() => state.entered),
    release: () => {
      state.released = true;
    },
  };
}
