// Where the platform may send a request on a tenant's behalf (HTTP tools, MCP servers): https
// only, and never to an address inside a network — private, loopback, link-local, shared (CGNAT),
// unspecified, multicast — written as an IP literal or as a name that only exists locally. Local
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
  if (url.username || url.password) return { ok: false, reason: "credentials in the URL are not allowed; use the auth header setting" };
  // A trailing dot names the same host ("localhost." is localhost).
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.$/, "");
  const loopback = isLoopback(host);
  if (loopback && opts.allowLoopback) {
    if (url.protocol === "https:" || url.protocol === "http:") return { ok: true, url };
    return { ok: false, reason: "only http(s) URLs are allowed" };
  }
  if (url.protocol !== "https:") return { ok: false, reason: "only https URLs are allowed" };
  if (loopback) return { ok: false, reason: "loopback addresses are not allowed" };
  if (LOCAL_NAMES.test(host) || !host.includes(".") && !host.includes(":")) return { ok: false, reason: `"${host}" is not a public host name` };
  const v4 = parseIPv4(host);
  if (v4 && isPrivateV4(v4)) return { ok: false, reason: "private, link-local and reserved IPv4 addresses are not allowed" };
  if (host.includes(":") && isPrivateV6(host)) return { ok: false, reason: "private, link-local and reserved IPv6 addresses are not allowed" };
  return { ok: true, url };
}

function isLoopback(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  const v4 = parseIPv4(host) ?? mappedV4(host);
  return !!v4 && v4[0] === 127;
}

/** Dotted-quad only; URL already normalises decimal, octal and hex forms ("2130706433") to it. */
function parseIPv4(host: string): number[] | null {
  const m = host.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

function isPrivateV4([a, b]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space (CGNAT)
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments, 192.0.0.0/24 (and 192.0.2.0/24 docs)
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  );
}

/**
 * An IPv4 address embedded in IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), each also in
 * the hex form URL normalisation gives (::ffff:7f00:1, ::7f00:1), or 6to4 (2002:aabb:ccdd::).
 */
function mappedV4(host: string): number[] | null {
  const dotted = host.match(/^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return parseIPv4(dotted[1]);
  const hex = host.match(/^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/) ?? host.match(/^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/);
  if (!hex) return null;
  const hi = parseInt(hex[1], 16);
  const lo = parseInt(hex[2], 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255];
}

function isPrivateV6(host: string): boolean {
  if (host === "::" || host === "::1") return true;
  const v4 = mappedV4(host);
  if (v4) return isPrivateV4(v4);
  const first = parseInt(host.split(":")[0] || "0", 16);
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xff00) === 0xff00 || // multicast
    host.startsWith("64:ff9b:") || // NAT64 (embeds IPv4)
    host.startsWith("2001:db8:") // documentation
  );
}

/** The environment's loopback setting: off unless ALLOW_LOOPBACK_TOOLS is "true" (a mistyped value is a config error). */
export const loopbackAllowed = (env: { ALLOW_LOOPBACK_TOOLS?: string }): boolean => envConfig(env).ALLOW_LOOPBACK_TOOLS;
