// An MCP server's auth value is sent as a header, which fetch trims of spaces and tabs: a value of
// those alone would go out empty, so it is refused as a 400 naming the field, and nothing is made.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { FAKE_MCP, installFakeMcp } from "./mcp-fake-server";

installFakeMcp();

describe("an MCP server's auth value", () => {
  it("of spaces and tabs alone is a 400 naming auth.value, and no server is registered", async () => {
    const key = await newTenant();
    const r = await api(
      "POST",
      "/v1/mcp-servers",
      { name: "blankauth", url: `${FAKE_MCP}/blankauth`, auth: { name: "authorization", value: " \t  " } },
      { key },
    );
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.error)).toContain("auth.value");
    expect((await api("GET", "/v1/mcp-servers", undefined, { key })).json.data).toEqual([]);
  });
});
