// Media types as requests name them in Content-Type and Accept. Type, subtype and parameter names
// are case-insensitive (RFC 9110 §8.3.1, §5.6.6), so each is compared lowercased; a parameter's
// value may be quoted. JSON bodies (and JSONL, line by line) must be UTF-8 (RFC 8259 §8.1).
import { ApiError } from "./errors";

export interface MediaType {
  /** `type/subtype`, lowercased; "" when the header is missing or blank. */
  essence: string;
  /** Parameters by lowercased name, values unquoted (case kept). */
  params: Map<string, string>;
}

const unquote = (value: string) =>
  value.length >= 2 && value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1).replace(/\\(.)/g, "$1")
    : value;

/** One media type (a Content-Type, or one range of an Accept list). */
export function parseMediaType(header: string | undefined): MediaType {
  const [essence, ...parts] = (header ?? "").split(";");
  const params = new Map<string, string>();
  for (const part of parts) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (name && !params.has(name)) params.set(name, unquote(part.slice(eq + 1).trim()));
  }
  return { essence: essence.trim().toLowerCase(), params };
}

/**
 * Whether an Accept header asks for `essence` (lowercase, e.g. "text/event-stream") by name: one of
 * its ranges is that type, in any case, with a weight above 0. Wildcards do not count, so a client
 * that names nothing in particular keeps the default answer.
 */
export function acceptsNamed(accept: string | undefined, essence: string): boolean {
  return (accept ?? "").split(",").some((range) => {
    const type = parseMediaType(range);
    return type.essence === essence && Number(type.params.get("q") ?? "1") > 0;
  });
}

/**
 * Labels a JSON body may name: UTF-8's (WHATWG Encoding's labels for it), and US-ASCII's, whose
 * bytes are UTF-8 as they are.
 */
const UTF8_LABELS = new Set([
  "utf-8",
  "utf8",
  "unicode-1-1-utf-8",
  "unicode11utf8",
  "unicode20utf8",
  "x-unicode20utf8",
  "us-ascii",
  "ascii",
]);

/**
 * A JSON body's Content-Type naming a charset other than UTF-8 is a 415 naming it: the body would
 * be read as UTF-8 all the same, and a Latin-1 "é" misread. No charset, UTF-8 or US-ASCII in any case, passes.
 */
export function refuseNonUtf8Charset(type: MediaType): void {
  const charset = type.params.get("charset");
  if (charset === undefined || UTF8_LABELS.has(charset.trim().toLowerCase())) return;
  throw new ApiError(
    415,
    "unsupported_media_type",
    `Content-Type names charset "${charset.slice(0, 40)}": JSON bodies must be UTF-8 (send charset=utf-8 or none)`,
  );
}
