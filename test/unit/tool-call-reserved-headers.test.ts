// A header the registration routes now refuse (the platform's own, or a hop-by-hop one such as
// Upgrade, which workerd acts on: the POST went out as a bodiless handshake GET) can still be in a
// tool or MCP server saved before they were refused. The call never sends it.
import { afterEach, describe, expect, it, vi } from "vitest";
import { callHttpTool } from "../../services/tools/http-call";
import { connectMcp } from "../../services/mcp/connect";

/** Every request fetch was asked for: its method and its headers, lower-cased. */
const sent: { method: string; headers: Record<string, string> }[] = [];
const recording = (answer: () => Response) =>
  vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push({ method: request.method, headers: Object.fromEntries(request.headers) });
    return answer();
  });

afterEach(() => {
  vi.unstubAllGlobals();
  sent.length = 0;
});

describe("a tool saved with a header now refused", () => {
  it("is called as the documented POST with its own headers, never the refused ones", async () => {
    recording(() => new Response("sunny"));
    const out = await callHttpTool(
      {
        name: "forecast",
        endpoint: "https://tool.example.com/weather",
        headers: { Upgrade: "websocket", Connection: "Upgrade", "Content-Type": "text/plain", "X-Api-Key": "k1" },
        timeoutMs: 5_000,
        maxResponseBytes: 100_000,
        idempotent: false,
        retries: 0,
      },
      { input: { city: "Paris" }, ids: { conversationId: "conv_x" }, allowLoopback: false },
    );
    expect(out).toMatchObject({ content: "sunny", isError: false });
    expect(sent).toHaveLength(1);
    expect(sent[0].method).toBe("POST");
    expect(sent[0].headers).toMatchObject({ "x-api-key": "k1", "content-type": "application/json" });
    expect(sent[0].headers).not.toHaveProperty("upgrade");
    expect(Object.keys(sent[0].headers)).not.toContain("connection");
  });

  it("an MCP server whose auth header is a refused name connects without it", async () => {
    recording(() => new Response("no", { status: 405 }));
    await expect(
      connectMcp(
        {},
        { url: "https://mcp.example.com/mcp", auth: { name: "Upgrade", value: "websocket" } },
        { timeoutMs: 5_000 },
      ),
    ).rejects.toThrow();
    expect(sent.length).toBeGreaterThan(0);
    for (const request of sent) expect(request.headers).not.toHaveProperty("upgrade");
  });
});
