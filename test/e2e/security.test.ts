// On the real stack (wrangler dev, both workers), started here with small rate limits and its
// output captured: keys never reach a log, a logged ticket is already spent, the per-key limits
// answer 429 with Retry-After, and what the platform does with oversized headers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack } from "../../scripts/stack.mjs";
import { jsonOrUndefined } from "../json-body";
import type { Method, ResponseOf } from "../route-types";
import type { ServerFrame } from "../../client";

const ADMIN_TOKEN = `adm_${crypto.randomUUID().replace(/-/g, "")}`;
const DEV_KEY = `devkey_${crypto.randomUUID().replace(/-/g, "")}`;
let stack: Awaited<ReturnType<typeof startStack>>;
let dir: string;

async function call<M extends Method, P extends string>(
  method: M,
  path: P,
  key: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(stack.baseUrl + path, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = jsonOrUndefined(text) as ResponseOf<M, P>;
  return { status: res.status, headers: res.headers, json, text };
}

function socket(
  url: string,
  headers?: Record<string, string>,
): Promise<{ ws: WebSocket | null; events: ServerFrame[] }> {
  return new Promise((resolve) => {
    // Node's WebSocket (undici) takes an init object with headers where a browser's takes protocols.
    const ws = new (WebSocket as unknown as new (url: string, init?: { headers: Record<string, string> }) => WebSocket)(
      url,
      headers ? { headers } : undefined,
    );
    const events: ServerFrame[] = [];
    ws.addEventListener("message", (m) => events.push(JSON.parse(String(m.data)) as ServerFrame));
    ws.addEventListener("open", () => resolve({ ws, events }));
    ws.addEventListener("error", () => resolve({ ws: null, events }));
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "context-chat-security-"));
  stack = await startStack({
    persistTo: dir,
    vars: { ADMIN_TOKEN, DEV_API_KEY: DEV_KEY, RATE_LIMIT_PER_MINUTE: "40", TURN_RATE_LIMIT_PER_MINUTE: "3" },
  });
});

afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("security on the running stack", () => {
  it("never writes a key or a live ticket to the worker's output", async () => {
    const tenant = await call("POST", "/v1/admin/tenants", ADMIN_TOKEN, { name: "logcheck" });
    expect(tenant.status).toBe(201);
    const key: string = tenant.json.apiKey;
    const wrongKey = `ck_${"w".repeat(43)}`;
    const conv = (await call("POST", "/v1/conversations", key, { title: "logs" })).json.id;
    expect((await call("POST", `/v1/conversations/${conv}/messages`, key, { content: "hello logs" })).status).toBe(200);
    expect((await call("GET", `/v1/conversations/${conv}`, DEV_KEY)).status).toBe(404);
    expect((await call("GET", "/v1/conversations", wrongKey)).status).toBe(401);
    expect((await call("POST", "/v1/admin/tenants", wrongKey, { name: "x" })).status).toBe(401);
    // A malformed body that reaches deep into validation, and a model error that goes through the error paths.
    expect((await call("POST", `/v1/conversations/${conv}/messages`, key, { content: 5 })).status).toBe(400);
    expect(
      (await call("POST", `/v1/conversations/${conv}/messages`, key, { content: "@model-error 500" })).status,
    ).toBe(502);
    // Both websocket auth paths.
    const ticket: string = (await call("POST", `/v1/conversations/${conv}/ws-ticket`, key)).json.ticket;
    const wsBase = stack.baseUrl.replace(/^http/, "ws");
    const byTicket = await socket(`${wsBase}/v1/conversations/${conv}/ws?ticket=${ticket}`);
    expect(byTicket.ws).not.toBeNull();
    byTicket.ws!.close();
    const byKey = await socket(`${wsBase}/v1/conversations/${conv}/ws`, { authorization: `Bearer ${key}` });
    expect(byKey.ws).not.toBeNull();
    byKey.ws!.close();
    const unused: string = (await call("POST", `/v1/conversations/${conv}/ws-ticket`, key)).json.ticket;
    await new Promise((r) => setTimeout(r, 1500));
    const output = stack.output();
    expect(output.length).toBeGreaterThan(0);
    for (const secret of [key, wrongKey, DEV_KEY, ADMIN_TOKEN, unused]) expect(output).not.toContain(secret);
    // wrangler dev's access log prints request URLs, so a ticket used in one may appear: by then it is spent.
    if (output.includes(ticket))
      expect((await socket(`${wsBase}/v1/conversations/${conv}/ws?ticket=${ticket}`)).ws).toBeNull();
  });

  it("answers 429 rate_limited with Retry-After past a key's turns and requests per minute", async () => {
    const key = (await call("POST", "/v1/admin/tenants", ADMIN_TOKEN, { name: "limits" })).json.apiKey;
    const conv = (await call("POST", "/v1/conversations", key, {})).json.id;
    const turns = [];
    for (let i = 0; i < 4; i++)
      turns.push(await call("POST", `/v1/conversations/${conv}/messages`, key, { content: `turn ${i}` }));
    expect(turns.map((t) => t.status)).toEqual([200, 200, 200, 429]);
    expect(turns[3].json.error?.type).toBe("rate_limited");
    expect(Number(turns[3].headers.get("retry-after"))).toBeGreaterThanOrEqual(19);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await call("GET", `/v1/conversations/${conv}`, key)).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    const over = await call("GET", `/v1/conversations/${conv}`, key);
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/40 requests per minute/);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("refuses oversized headers: the app's 431 up to what the platform lets through, the platform's refusal past it", async () => {
    const junk = (kib: number) => ({ "x-junk": "j".repeat(kib * 1024) });
    // 40 KiB gets through the platform, so the app's own 32 KiB cap must answer, in its error shape.
    const app = await call("GET", "/v1/conversations", null, undefined, junk(40));
    expect(app.status).toBe(431);
    expect(app.json.error?.type).toBe("request_header_fields_too_large");
    // Past what wrangler dev parses, the platform refuses before the app: either its own 431, or it
    // closes the connection. Anything else (a 2xx, a 5xx, a hang, another error) fails.
    const observed: Record<string, string> = {};
    for (const kib of [100, 1024]) {
      const outcome = await call("GET", "/v1/conversations", null, undefined, junk(kib)).then(
        (r) => `status ${r.status}`,
        (err: Error & { cause?: { code?: string; message?: string } }) =>
          `refused ${err.cause?.code ?? ""} ${err.cause?.message ?? err.message}`,
      );
      observed[`${kib} KiB`] = outcome;
      expect(outcome, `${kib} KiB`).toMatch(
        /^status 431$|^refused (UND_ERR_SOCKET|ECONNRESET|UND_ERR_HEADERS_OVERFLOW)\b/,
      );
    }
    console.log(`oversized headers on wrangler dev: ${JSON.stringify(observed)}`);
    // Refusing them cost nothing: the stack still answers an ordinary request.
    expect((await call("GET", "/health", null)).status).toBe(200);
  });
});
