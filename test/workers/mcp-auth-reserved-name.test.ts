// An MCP server's auth header rides every request the MCP transport makes, beside the headers the
// transport sets itself (the body's type and length, the host, what it accepts, the session and
// protocol version) and the hop-by-hop headers fetch acts on (an Upgrade turns the POST into a
// bodiless websocket handshake): an auth named as one of those would override it and break every
// call, so it is a 400 naming auth.name, and nothing is registered or changed.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

installFakeMcp();

describe("an MCP server's auth header name", () => {
  const reserved = [
    "Host",
    "content-type",
    "Content-Length",
    "accept",
    "mcp-session-id",
    "MCP-Protocol-Version",
    "Upgrade",
    "connection",
    "Keep-Alive",
    "Proxy-Connection",
    "TE",
    "Trailer",
    "Transfer-Encoding",
  ];
  for (const name of reserved)
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

  for (const name of ["Upgrade", "Connection"])
    it(`may not be changed to ${name}`, async () => {
      const key = await newTenant();
      const created = await api(
        "POST",
        "/v1/mcp-servers",
        { name: "patched", url: `${FAKE_MCP}/patched`, auth: { name: "x-api-key", value: "secret-value" } },
        { key },
      );
      expect(created.status).toBe(201);
      const id = created.json.id;
      const r = await api("PATCH", `/v1/mcp-servers/${id}`, { auth: { name, value: "websocket" } }, { key });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json.error)).toContain("auth.name");
      // The row is as registered: the auth header the server's own, not replaced.
      expect((await api("GET", `/v1/mcp-servers/${id}`, undefined, { key })).json).toEqual(created.json);
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
