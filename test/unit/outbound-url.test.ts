// The outbound URL rules for tenant tools and MCP servers: https to public hosts only; loopback
// only when the setting allows it.
import { describe, expect, it } from "vitest";
import { checkOutboundUrl, loopbackAllowed, parseIPv6 } from "../../core/outbound-url";

const ok = (u: string, allowLoopback = false) => checkOutboundUrl(u, { allowLoopback }).ok;

describe("checkOutboundUrl", () => {
  it("allows https to public hosts and public IPs", () => {
    for (const u of [
      "https://api.example.com/tool",
      "https://mcp.example.org:8443/mcp",
      "https://8.8.8.8/x",
      "https://[2606:4700:4700::1111]/",
    ])
      expect(ok(u), u).toBe(true);
  });

  it("refuses port 0", () => {
    expect(checkOutboundUrl("https://example.com:0/")).toEqual({
      ok: false,
      reason: "port 0 is not a port a server can listen on",
    });
    expect(checkOutboundUrl("https://example.com:8443/").ok).toBe(true);
  });

  it("refuses plain http, other schemes and credentials in the URL", () => {
    expect(checkOutboundUrl("http://api.example.com/").ok).toBe(false);
    expect(checkOutboundUrl("ftp://api.example.com/").ok).toBe(false);
    expect(checkOutboundUrl("file:///etc/passwd").ok).toBe(false);
    expect(checkOutboundUrl("https://user:pw@api.example.com/")).toEqual({
      ok: false,
      reason: expect.stringMatching(/credentials/),
    });
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
      // However many dots end it: an empty label names no public host.
      "https://localhost../",
      "https://metadata.google.internal../",
      "https://10.0.0.1../",
      "https://169.254.169.254../latest/meta-data",
      "https://intranet../",
      "https://example..com/",
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

  it("refuses each special-purpose /24 and no more of the /16 around it", () => {
    for (const u of [
      "https://192.0.0.8/", // IETF protocol assignments
      "https://192.0.2.1/", // TEST-NET-1
      "https://198.51.100.7/", // TEST-NET-2
      "https://203.0.113.9/", // TEST-NET-3
      "https://192.88.99.1/", // 6to4 relay anycast
      "https://[::ffff:203.0.113.9]/",
    ])
      expect(ok(u), u).toBe(false);
    // Public addresses next to them: 192.0.32.0/20 is assigned to ICANN, and so on.
    for (const u of ["https://192.0.43.10/", "https://198.51.101.1/", "https://203.0.114.1/", "https://192.88.100.1/"])
      expect(ok(u), u).toBe(true);
  });

  it("judges the IPv4 address an IPv6 address carries by the IPv4 rules, in every form that carries one", () => {
    const refused = [
      // IPv4-mapped ::ffff:a.b.c.d
      "https://[::ffff:169.254.169.254]/",
      "https://[::ffff:a9fe:a9fe]/",
      "https://[::ffff:192.168.0.1]/",
      // IPv4-compatible ::a.b.c.d
      "https://[::10.0.0.1]/",
      "https://[::a00:1]/",
      // SIIT ::ffff:0:a.b.c.d
      "https://[::ffff:0:a9fe:a9fe]/",
      "https://[::ffff:0:169.254.169.254]/",
      "https://[::ffff:0:10.0.0.1]/",
      "https://[0:0:0:0:ffff:0:c0a8:101]/",
      // 6to4 2002:AABB:CCDD::/16, whatever follows (and an empty second group)
      "https://[2002:a01::]/", // 10.1.0.0
      "https://[2002:a9fe::]/", // 169.254.0.0
      "https://[2002:c0a8::1]/", // 192.168.0.0
      "https://[2002:0a00:0001::]/",
      "https://[2002:ac10:1:ffff::1]/", // 172.16.0.1
      // NAT64 64:ff9b::/96
      "https://[64:ff9b::a9fe:a9fe]/",
      "https://[64:ff9b::10.0.0.1]/",
      "https://[64:ff9b::127.0.0.1]/",
      // Teredo 2001:0::/32: the client is the last 32 bits inverted, the server the 32 bits after the prefix
      "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/", // client 10.0.0.1
      "https://[2001:0:4136:e378:8000:63bf:5601:5601]/", // client 169.254.169.254
      "https://[2001:0:a00:1:8000:63bf:f7f7:f7f7]/", // server 10.0.0.1
    ];
    for (const u of refused)
      expect(checkOutboundUrl(u), u).toEqual({ ok: false, reason: expect.stringMatching(/IPv6/) });
    const allowed = [
      "https://[::ffff:8.8.8.8]/",
      "https://[::ffff:0:8.8.8.8]/",
      "https://[2002:808:808::1]/",
      "https://[2002:808:808:a01::1]/", // a private-looking subnet of a public 6to4 prefix
      "https://[64:ff9b::8.8.8.8]/",
      "https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/", // server 65.54.227.120, client 8.8.8.8
    ];
    for (const u of allowed) expect(ok(u), u).toBe(true);
  });

  it("refuses the IPv6 ranges that never reach a public host, whatever they carry", () => {
    for (const u of [
      "https://[::]/",
      "https://[64:ff9b:1::808:808]/", // local-use NAT64 64:ff9b:1::/48
      "https://[64:ff9b:1:ffff::1]/",
      "https://[64:ff9b:0:0:1::808:808]/", // 64:ff9b::/32 outside the well-known /96
      "https://[fec0::1]/", // site-local
      "https://[100::1]/", // discard-only
      "https://[ff02::1]/",
      "https://[2001:db8::1]/",
      "https://[3fff::1]/", // documentation 3fff::/20
      "https://[3fff:fff:ffff::1]/",
      "https://[2001:2::1]/", // benchmarking 2001:2::/48
      "https://[5f00::1]/", // SRv6 SIDs
      "https://[fc00::1]/",
    ])
      expect(ok(u), u).toBe(false);
    // Their public neighbours stay reachable.
    for (const u of ["https://[3fff:1000::1]/", "https://[2001:2:1::1]/", "https://[5f01::1]/"])
      expect(ok(u), u).toBe(true);
  });

  it("reads an IPv6 address into its eight groups: :: compression, a dotted IPv4 tail, and no zone id", () => {
    expect(parseIPv6("::")).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("::1")).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6("2002:a01::")).toEqual([0x2002, 0xa01, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6("::ffff:0:169.254.169.254")).toEqual([0, 0, 0, 0, 0xffff, 0, 0xa9fe, 0xa9fe]);
    expect(parseIPv6("1:2:3:4:5:6:7::")).toEqual([1, 2, 3, 4, 5, 6, 7, 0]);
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).toEqual([1, 2, 3, 4, 5, 6, 0x102, 0x304]);
    expect(parseIPv6("FE80:0:0:0:0:0:0:1")).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    for (const bad of [
      "fe80::1%eth0",
      "fe80::1%25eth0",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:8::",
      "1:2:3:4:5:6:7",
      "1.2.3.4::",
      "::1.2.3",
      "::1.2.3.4:5",
      "::256.0.0.1",
      "12345::",
      ":1::",
      "1::g",
      "",
    ])
      expect(parseIPv6(bad), bad).toBeNull();
  });

  it("loopback, over http or https, only when the setting allows it; other private ranges never", () => {
    expect(ok("http://127.0.0.1:9000/mcp", true)).toBe(true);
    expect(ok("https://localhost:9000/", true)).toBe(true);
    expect(ok("http://127.0.0.1:9000/mcp", false)).toBe(false);
    expect(ok("http://10.0.0.1/", true)).toBe(false);
    expect(ok("http://example.com/", true)).toBe(false);
    // An IPv4-mapped 127.0.0.1 is this machine; a 6to4 or NAT64 address built from it is not.
    expect(ok("http://[::ffff:127.0.0.1]:9000/", true)).toBe(true);
    expect(ok("http://[2002:7f00:1::]/", true)).toBe(false);
    expect(ok("https://[64:ff9b::7f00:1]/", true)).toBe(false);
  });

  it("the setting is on only for true; unset or false is off, anything else refused by name", () => {
    expect(loopbackAllowed({})).toBe(false);
    expect(loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "false" })).toBe(false);
    expect(() => loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "1" })).toThrow(
      /ALLOW_LOOPBACK_TOOLS must be "true" or "false", got "1"/,
    );
    expect(loopbackAllowed({ ALLOW_LOOPBACK_TOOLS: "true" })).toBe(true);
  });
});
