// Where the platform may send a request on a tenant's behalf (HTTP tools, MCP servers): https
// only, and never to an address inside a network — private, loopback, link-local, shared (CGNAT),
// unspecified, multicast — written as an IP literal or as a name that only exists locally. An IPv6
// literal is judged from its 128 bits, and an IPv4 address it carries by the IPv4 rules. Local
// dev and the test suite may allow loopback (http or https) through ALLOW_LOOPBACK_TOOLS, which is
// off unless set. A name is not resolved here (a Worker cannot); deployed, a Worker's fetch leaves
// from Cloudflare's network, which does not route to private ranges, and every redirect hop is
// checked again by the caller.
import { envConfig } from "./env-config";

export type OutboundCheck = { ok: true; url: URL } | { ok: false; reason: string };

const LOCAL_NAMES = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i;

export function checkOutboundUrl(raw: string, opts: { allowLoopback?: boolean } = {}): OutboundCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.username || url.password)
    return { ok: false, reason: "credentials in the URL are not allowed; use the auth header setting" };
  // Port 0 is no port a server listens on.
  if (url.port === "0") return { ok: false, reason: "port 0 is not a port a server can listen on" };
  // A trailing dot names the same host ("localhost." is localhost).
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.$/, "");
  const v6 = host.includes(":") ? parseIPv6(host) : null;
  if (host.includes(":") && !v6) return { ok: false, reason: "not a valid IPv6 address" };
  // More dots than that ("localhost..", "10.0.0.1..") leave an empty label: no host name has one.
  if (!v6 && (host.startsWith(".") || host.endsWith(".") || host.includes("..")))
    return { ok: false, reason: `"${url.hostname}" has an empty label (two dots in a row)` };
  const loopback = isLoopback(host, v6);
  if (loopback && opts.allowLoopback) {
    if (url.protocol === "https:" || url.protocol === "http:") return { ok: true, url };
    return { ok: false, reason: "only http(s) URLs are allowed" };
  }
  if (url.protocol !== "https:") return { ok: false, reason: "only https URLs are allowed" };
  if (loopback) return { ok: false, reason: "loopback addresses are not allowed" };
  if (v6)
    return isPrivateV6(v6)
      ? {
          ok: false,
          reason:
            "private, link-local and reserved IPv6 addresses (and IPv6 addresses carrying such an IPv4 address) are not allowed",
        }
      : { ok: true, url };
  if (LOCAL_NAMES.test(host) || !host.includes("."))
    return { ok: false, reason: `"${host}" is not a public host name` };
  const v4 = parseIPv4(host);
  if (v4 && isPrivateV4(v4))
    return { ok: false, reason: "private, link-local and reserved IPv4 addresses are not allowed" };
  return { ok: true, url };
}

/** This machine: localhost names, 127.0.0.0/8, ::1, and 127.0.0.0/8 written IPv4-mapped (::ffff:127.0.0.1). */
function isLoopback(host: string, v6: number[] | null): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (v6) return v6.slice(0, 7).every((g) => g === 0) ? v6[7] === 1 : isMapped(v6) && v6[6] >> 8 === 127;
  return parseIPv4(host)?.[0] === 127;
}

/** Dotted-quad only; URL already normalises decimal, octal and hex forms ("2130706433") to it. */
function parseIPv4(host: string): number[] | null {
  const m = host.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** Special-purpose IPv4 blocks (IANA's registry, RFC 6890) that name no public server. */
function isPrivateV4([a, b, c]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space (CGNAT)
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || // IETF protocol assignments
    (a === 192 && b === 0 && c === 2) || // documentation, TEST-NET-1
    (a === 192 && b === 88 && c === 99) || // deprecated 6to4 relay anycast
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) || // documentation, TEST-NET-2
    (a === 203 && b === 0 && c === 113) || // documentation, TEST-NET-3
    a >= 224 // multicast and reserved
  );
}

/**
 * The eight 16-bit groups of an IPv6 address: `::` stands for one or more zero groups, the last
 * 32 bits may be written as a dotted IPv4 address. A zone id ("fe80::1%eth0") names an interface
 * of the sending machine, so an address with one is no address here (null), like any other text
 * that is not an IPv6 address.
 */
export function parseIPv6(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string, last: boolean): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [i, piece] of pieces.entries()) {
      if (/^[0-9a-f]{1,4}$/i.test(piece)) out.push(parseInt(piece, 16));
      else if (last && i === pieces.length - 1 && parseIPv4(piece)) {
        const [a, b, c, d] = parseIPv4(piece)!;
        out.push((a << 8) | b, (c << 8) | d);
      } else return null;
    }
    return out;
  };
  const head = groups(halves[0], halves.length === 1);
  if (halves.length === 1) return head?.length === 8 ? head : null;
  const tail = groups(halves[1], true);
  if (!head || !tail || head.length + tail.length > 7) return null;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];
const zeros = (g: number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);
/** ::ffff:0:0/96: how a dual-stack socket writes an IPv4 peer. */
const isMapped = (g: number[]) => zeros(g, 0, 5) && g[5] === 0xffff;

/** The dotted IPv4 address an IPv4-mapped IPv6 address (its eight groups) writes, or null for any other. */
export const mappedV4 = (g: number[]): string | null => (isMapped(g) ? v4Of(g[6], g[7]).join(".") : null);

/**
 * The IPv4 addresses an IPv6 address stands for, read from its bits (not its spelling): mapped
 * ::ffff:a.b.c.d, compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, 6to4 2002:AABB:CCDD::/16, NAT64
 * 64:ff9b::/96, and Teredo 2001:0::/32 (its server in bits 32-63, its client in the last 32 bits
 * inverted). Each is judged by the IPv4 rules.
 */
function embeddedV4(g: number[]): number[][] {
  const last = v4Of(g[6], g[7]);
  if (isMapped(g) || zeros(g, 0, 6)) return [last];
  if (zeros(g, 0, 4) && g[4] === 0xffff && g[5] === 0) return [last];
  if (g[0] === 0x2002) return [v4Of(g[1], g[2])];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(g, 2, 6)) return [last];
  if (g[0] === 0x2001 && g[1] === 0) return [v4Of(g[2], g[3]), v4Of(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

function isPrivateV6(g: number[]): boolean {
  if (embeddedV4(g).some(isPrivateV4)) return true;
  const [a, b] = g;
  return (
    (a & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (a & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (a & 0xffc0) === 0xfec0 || // site-local fec0::/10 (deprecated, still routed inside some networks)
    (a & 0xff00) === 0xff00 || // multicast
    (a === 0x64 && b === 0xff9b && !zeros(g, 2, 6)) || // NAT64 beyond the well-known /96: local-use 64:ff9b:1::/48, whose IPv4 sits where its local prefix puts it
    (a === 0x100 && zeros(g, 1, 4)) || // discard-only 100::/64
    (a === 0x2001 && b === 0xdb8) || // documentation 2001:db8::/32
    (a === 0x3fff && (b & 0xf000) === 0) || // documentation 3fff::/20 (RFC 9637)
    (a === 0x2001 && b === 2 && g[2] === 0) || // benchmarking 2001:2::/48
    a === 0x5f00 // SRv6 SIDs 5f00::/16 (RFC 9602)
  );
}

/** The environment's loopback setting: off unless ALLOW_LOOPBACK_TOOLS is "true" (a mistyped value is a config error). */
export const loopbackAllowed = (env: { ALLOW_LOOPBACK_TOOLS?: string }): boolean => envConfig(env).ALLOW_LOOPBACK_TOOLS;
