// An MCP server's auth header rides every request the MCP transport makes, beside the headers the
// transport sets itself (the body's type and length, the host, what it accepts, the session and
// protocol version): an auth named as one of those would override it and break every call, so it
// is a 400 naming auth.name, and nothing is registered.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

installFakeMcp();

describe("an MCP server's auth header name", () => {
  for (const name of ["Host", "content-type", "Content-Length", "accept", "mcp-session-id", "MCP-Protocol-Version"])
    it(`may not be ${name}`, async () => {
      const key = await newTenant();
      const r = await api(
        "POST",
        "/v1/mcp-servers",
        { name: "reserved", url: `${FAKE_MCP}/reserved`, auth: { name, value: "secret-value" } },
        { key },
      );
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json.error)).toContain("auth.name");
      expect((await api("GET", "/v1/mcp-servers", undefined, { key })).json.data).toEqual([]);
    });

  it("may be a header of the server's own (x-api-key)", async () => {
    const key = await newTenant();
    const r = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "ownheader", url: `${FAKE_MCP}/ownheader`, auth: { name: "x-api-key", value: "secret-value" } },
      { key },
    );
    expect(r.status).toBe(201);
  });
});
