// An HTTP tool's answers at the edges of the status rules (docs/api-notes.md "HTTP tools"): a failed
// answer's body is read only up to a small cap of its own, whatever the tool's maxResponseBytes, so
// a large 5xx/429 page is still an HTTP <status> (and retried); a retried call that ends on another
// error says it was retried; only 301, 302, 303, 307 and 308 are redirects.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultText, toolResults } from "../blocks";
import { api, createConversation, newTenant, send, turnMessages } from "./helpers";

const BASE = "http://127.0.0.1:11";
const seen: { method: string; path: string }[] = [];
let handler: (req: Request, n: number) => Response | Promise<Response> = () => new Response("ok");
const original = globalThis.fetch;
beforeAll(() => {
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    if (!req.url.startsWith(`${BASE}/`)) return original(input, init);
    seen.push({ method: req.method, path: new URL(req.url).pathname });
    return handler(req, seen.length);
  }) as typeof fetch;
});
afterAll(() => {
  globalThis.fetch = original;
});

/** Registers the tool `edgetool` on a new tenant, activates it and calls it once; its result. */
async function callOnce(extra: Record<string, unknown>) {
  const key = await newTenant();
  const r = await api(
    "POST",
    "/v1/tools",
    {
      kind: "http",
      name: "edgetool",
      description: "edge tool.",
      inputSchema: { type: "object", properties: {} },
      endpoint: `${BASE}/t`,
      ...extra,
    },
    { key },
  );
  expect(r.status).toBe(201);
  const conv = await createConversation(undefined, key);
  seen.length = 0;
  const t = await send(conv, `@tool tool_activate {"name":"edgetool"}\n@tool edgetool {}`, key);
  return toolResults(turnMessages(t))[1];
}

describe("a failed answer larger than maxResponseBytes", () => {
  it("a 503 whose page passes maxResponseBytes is an HTTP 503, and retried", async () => {
    handler = (_req, n) =>
      n === 1 ? new Response(`<html>${"x".repeat(1500)}</html>`, { status: 503 }) : new Response("fine");
    const r = await callOnce({ idempotent: true, retries: 1, maxResponseBytes: 1000 });
    expect(seen.length).toBe(2);
    expect(r.is_error).toBeFalsy();
    expect(resultText(r)).toBe("fine");
  });

  it("a 429 with a large page (and content-length) is retried, and ends as HTTP 429 with its first 500 chars", async () => {
    const page = `<html>${"y".repeat(50_000)}</html>`;
    handler = () => new Response(page, { status: 429, headers: { "content-length": String(page.length) } });
    const r = await callOnce({ idempotent: true, retries: 1, maxResponseBytes: 1000 });
    expect(seen.length).toBe(2);
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toBe(`edgetool: HTTP 429: ${page.slice(0, 500)} (after 2 attempts)`);
  });

  it("a 404 with a page past maxResponseBytes is an HTTP 404, not retried", async () => {
    handler = () => new Response(`not here ${"z".repeat(20_000)}`, { status: 404 });
    const r = await callOnce({ idempotent: true, retries: 2, maxResponseBytes: 1000 });
    expect(seen.length).toBe(1);
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toMatch(/^edgetool: HTTP 404: not here z+/);
    expect(resultText(r)).not.toContain("larger than");
  });

  it("a 2xx answer past maxResponseBytes is still refused as too large", async () => {
    handler = () => new Response("w".repeat(1500));
    const r = await callOnce({ maxResponseBytes: 1000 });
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toBe("edgetool: response larger than 1000 bytes (the tool's maxResponseBytes)");
  });
});

describe("a retried call that ends on an error that is not retried", () => {
  it("503 then 404 says it was retried", async () => {
    handler = (_req, n) => (n === 1 ? new Response("busy", { status: 503 }) : new Response("gone", { status: 404 }));
    const r = await callOnce({ idempotent: true, retries: 2 });
    expect(seen.length).toBe(2);
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toBe("edgetool: HTTP 404: gone (after 2 attempts)");
  });

  it("a 404 on the first attempt has no attempts suffix", async () => {
    handler = () => new Response("gone", { status: 404 });
    const r = await callOnce({ idempotent: true, retries: 2 });
    expect(resultText(r)).toBe("edgetool: HTTP 404: gone");
  });
});

describe("3xx answers", () => {
  const elsewhere = (status: number) => (req: Request) =>
    new URL(req.url).pathname === "/t"
      ? new Response(status === 304 ? null : "choices", { status, headers: { location: `${BASE}/other` } })
      : new Response(`reached ${new URL(req.url).pathname} by ${req.method}`);

  for (const status of [300, 304, 305, 306]) {
    it(`a ${status} with a Location is an HTTP ${status}, not followed`, async () => {
      handler = elsewhere(status);
      const r = await callOnce({});
      expect(seen).toEqual([{ method: "POST", path: "/t" }]);
      expect(r.is_error).toBe(true);
      expect(resultText(r)).toMatch(new RegExp(`^edgetool: HTTP ${status}`));
    });
  }

  for (const [status, method] of [
    [301, "GET"],
    [302, "GET"],
    [303, "GET"],
    [307, "POST"],
    [308, "POST"],
  ] as const) {
    it(`a ${status} is followed by ${method}`, async () => {
      handler = elsewhere(status);
      const r = await callOnce({});
      expect(resultText(r)).toBe(`reached /other by ${method}`);
    });
  }
});

describe("a failed answer that echoes the tool's secret", () => {
  it("a long secret written escaped past the small read cap is still withheld whole", async () => {
    const secret = `k${"Q7".repeat(1500)}`;
    const escaped = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
    handler = () => new Response(`${"x".repeat(400)}${escaped} tail`, { status: 500 });
    const r = await callOnce({ headers: { "x-api-key": secret } });
    expect(r.is_error).toBe(true);
    expect(resultText(r)).toMatch(/^edgetool: HTTP 500: x{400}/);
    expect(resultText(r)).not.toContain("\\u0051\\u0037");
  });
});
