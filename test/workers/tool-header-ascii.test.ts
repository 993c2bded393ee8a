// A header value (an HTTP tool's headers, an MCP server's auth value) is visible ASCII, space and
// tab only: a Latin-1 character would be sent as its UTF-8 bytes, which the transcript's
// withholding (matching the value as given) would miss and the runtime's warning would print whole.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

const tool = (headers: Record<string, string>) => ({
  kind: "http",
  name: "latin",
  description: "d",
  inputSchema: { type: "object" },
  endpoint: "https://example.com/hook",
  headers,
});

describe("a header value past ASCII", () => {
  it("is a 400 naming the header, for an HTTP tool", async () => {
    const key = await newTenant();
    const r = await api("POST", "/v1/tools", tool({ "X-Api-Key": "Bearer s\u00e9cret-token" }), { key });
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/headers\.X-Api-Key: .*visible ASCII/);
    const ok = await api("POST", "/v1/tools", tool({ "X-Api-Key": "Bearer\tsecret-token ~" }), { key });
    expect(ok.status).toBe(201);
  });

  it("is a 400 naming auth.value, for an MCP server", async () => {
    const key = await newTenant();
    const body = { name: "latin", url: "https://example.com/mcp", auth: { value: "Bearer s\u00e9cret-token" } };
    const r = await api("POST", "/v1/mcp-servers", body, { key });
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/auth\.value: .*visible ASCII/);
  });
});
