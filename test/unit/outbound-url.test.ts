// The outbound URL rules for tenant tools and MCP servers: https to public hosts only; loopback
// only when the setting allows it.
import { describe, expect, it } from "vitest";
import { checkOutboundUrl, loopbackAllowed } from "../../core/outbound-url";

const ok = (u: string, allowLoopback = false) => checkOutboundUrl(u, { allowLoopback }).ok;

describe("checkOutboundUrl", () => {
  it("allows https to public hosts and public IPs", () => {
    for (const u of ["https://api.example.com/tool", "https://mcp.example.org:8443/mcp", "https://8.8.8.8/x", "https://[2606:4700:4700::1111]/"]) expect(ok(u), u).toBe(true);
  });

  it("refuses plain http, other schemes and credentials in the URL", () => {
    expect(checkOutboundUrl("http://api.example.com/").ok).toBe(false);
    expect(checkOutboundUrl("ftp://api.example.com/").ok).toBe(false);
    expect(checkOutboundUrl("file:///etc/passwd").ok).toBe(false);
    expect(checkOutboundUrl("https://user:pw@api.example.com/")).toEqual({ ok: false, reason: expect.stringMatching(/credentials/) });
    expect(checkOutboundUrl("not a url")).toEqual({ ok: false, reason: "not a valid URL" });
  });

  it("refuses private, loopback, link-local, CGNAT and reserved addresses in every spelling", () => {
    for (const u of [
      "https://10.0.0.5/",
      "https://172.16.3.4/",
      "https://172.31.255.255/",
      "https://192.168.1.1/",
      "https://169.254.169.254/latest/meta-data",
      "https://100.64.0.1/",
      "https://0.0.0.0/",
      "https://127.0.0.1/",
      "https://2130706433/", // 127.0.0.1 as a decimal
      "https://0x7f.0.0.1/",
      "https://[::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:10.0.0.1]/",
      "https://[::127.0.0.1]/", // IPv4-compatible, normalised to ::7f00:1
      "https://[::a9fe:a9fe]/", // 169.254.169.254, compatible form
      "https://[2002:7f00:1::]/", // 6to4 of 127.0.0.1
      "https://[2002:a00:1::1]/", // 6to4 of 10.0.0.1
      "https://localhost./",
      "https://metadata.google.internal./",
      "https://[fd00::1]/",
      "https://[fe80::1]/",
      "https://224.0.0.1/",
      "https://localhost/",
      "https://api.localhost/",
      "https://printer.local/",
      "https://metadata.google.internal/",
      "https://intranet/",
    ])
      expect(ok(u), u).toBe(false);
    // Public neighbours of the private ranges stay allowed.
    for (const u of ["https://172.32.0.1/", "https://100.128.0.1/", "https://11.0.0.1/"]) expect(ok(u), u).toBe(true);
  });

  it("loopback, over http or https, only when the setting allows it; other private ranges never", () => {
    expect(ok("http://127.0.0.1:9000/mcp", true)).toBe(true);
    expect(ok("https://localhost:9000/", true)).toBe(true);
    expect(ok("http://127.0.0.1:9000/mcp", false)).toBe(false);
    expect(ok("http://10.0.0.1/", true)).toBe(false);
    expect(ok("http://example.com/", true)).toBe(false);
  });

  it("the setting is on only for true; unset or false is off, anything else refused by name", () => {
    expect(loopbackAllowed({})).toBe(false);
    expect(loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "false" })).toBe(false);
    expect(() => loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "1" })).toThrow(/ALLOW_LOOPBACK_TOOLS must be "true" or "false", got "1"/);
    expect(loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "true" })).toBe(true);
  });
});
