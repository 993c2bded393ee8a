// Every answer of the chat worker carries a `request-id` header (the edge's cf-ray, else a fresh
// `req_…` id): what a user quotes when a call failed, and what the worker's error logs name. Error
// bodies keep their one shape.
import { describe, expect, it, vi } from "vitest";
import { ApiError, createClient } from "../../client";
import { callWith } from "./app-with-vars";
import { api, connectSocket, createConversation, newTenant, sseEventsOf, worker } from "./helpers";

const FRESH = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

describe("request-id", () => {
  it("is on a 200, a 404, a 400 validation error and an SSE turn; error bodies keep their shape", async () => {
    const key = await newTenant();
    const ok = await api("GET", "/v1/conversations", undefined, { key });
    const missing = await api("GET", "/v1/nothing-here", undefined, { key });
    const invalid = await api("POST", "/v1/conversations", { title: 42 }, { key });
    expect(ok.status).toBe(200);
    expect(missing.status).toBe(404);
    expect(invalid.status, invalid.text).toBe(400);
    for (const r of [ok, missing, invalid]) expect(r.headers.get("request-id")).toMatch(FRESH);
    for (const r of [missing, invalid]) expect(Object.keys(JSON.parse(r.text))).toEqual(["error"]);

    const conv = await createConversation(undefined, key);
    const sse = await api(
      "POST",
      `/v1/conversations/${conv}/messages`,
      { content: "hi" },
      { key, headers: { accept: "text/event-stream" } },
    );
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(sseEventsOf(sse.text).at(-1)?.type).toBe("turn_end");
    expect(sse.headers.get("request-id")).toMatch(FRESH);
  });

  it("is on the unauthenticated 401, /health and the websocket upgrade's 101", async () => {
    const key = await newTenant();
    const health = await api("GET", "/health", undefined, { key: "" });
    const denied = await api("GET", "/v1/conversations", undefined, { key: "ck_nope" });
    expect(denied.status).toBe(401);
    for (const r of [health, denied]) expect(r.headers.get("request-id")).toMatch(FRESH);
    const conv = await createConversation(undefined, key);
    const sock = await connectSocket(`/v1/conversations/${conv}/ws`, {
      authorization: `Bearer ${key}`,
      "cf-ray": "sock42-AMS",
    });
    expect(sock.status).toBe(101);
    expect(sock.headers.get("request-id")).toBe("sock42-AMS");
    sock.ws?.close();
  });

  it("differs between two requests", async () => {
    const a = await api("GET", "/health", undefined, { key: "" });
    const b = await api("GET", "/health", undefined, { key: "" });
    expect(a.headers.get("request-id")).toMatch(FRESH);
    expect(b.headers.get("request-id")).toMatch(FRESH);
    expect(a.headers.get("request-id")).not.toBe(b.headers.get("request-id"));
  });

  it("is the edge's cf-ray when the request has one", async () => {
    const key = await newTenant();
    const ok = await api("GET", "/v1/conversations", undefined, { key, headers: { "cf-ray": "abc123-LHR" } });
    const missing = await api("GET", "/v1/nothing-here", undefined, { key, headers: { "cf-ray": "abc123-LHR" } });
    expect(ok.headers.get("request-id")).toBe("abc123-LHR");
    expect(missing.headers.get("request-id")).toBe("abc123-LHR");
  });

  it("never echoes a client's own request-id, nor a cf-ray that is no ray id", async () => {
    const key = await newTenant();
    const forged = await api("GET", "/v1/nothing-here", undefined, { key, headers: { "request-id": "forged" } });
    expect(forged.headers.get("request-id")).toMatch(FRESH);
    const odd = await api("GET", "/health", undefined, { key: "", headers: { "cf-ray": "x y\tz" } });
    expect(odd.headers.get("request-id")).toMatch(FRESH);
  });

  it("is named by the unhandled error's log line and its 500's header", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      // D1 that throws a plain Error (no API error): the key's lookup fails unhandled.
      const broken = {
        prepare: () => {
          throw new Error("d1 down");
        },
      };
      const res = await callWith(
        { DB: broken },
        {
          method: "GET",
          path: "/v1/conversations",
          key: `ck_${crypto.randomUUID()}`,
          headers: { "cf-ray": "feed42-SJC" },
        },
      );
      expect(res.status).toBe(500);
      expect(res.headers.get("request-id")).toBe("feed42-SJC");
      expect(res.json).toEqual({ error: { type: "api_error", message: "internal error" } });
      const line = log.mock.calls.find((call) => call[0] === "unhandled error");
      expect(line?.join(" ")).toContain("feed42-SJC");
    } finally {
      log.mockRestore();
    }
  });

  it("is the client's ApiError.requestId", async () => {
    const key = await newTenant();
    const client = createClient({
      baseUrl: "http://chat.test",
      key,
      fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
        worker().fetch(new Request(input, init))) as typeof fetch,
    });
    const error = await client
      .messages("conv_nope")
      .next()
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ApiError);
    const refused = error as ApiError;
    expect(refused.status).toBe(404);
    expect(refused.requestId).toMatch(FRESH);
  });
});
