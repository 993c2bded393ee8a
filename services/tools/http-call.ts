// One call of a tenant's HTTP tool. The platform POSTs the call's input as the JSON body, names
// the call in headers (X-Tool-Name, X-Conversation-Id, X-Turn-Id, X-Tool-Call-Id, and
// Idempotency-Key = the tool_use id, the same on every retry), and adds the tool's own headers.
// Every hop is checked against the outbound URL rules (redirects are followed by hand), the body
// is read up to the tool's cap within its timeout, and every failure comes back as a readable
// error result, never a thrown error: the model decides what to do next.
import { checkOutboundUrl } from "../../core/outbound-url";
import { RESERVED_HEADERS } from "../../core/tenant-tool-rules";

export interface HttpToolSpec {
  name: string;
  endpoint: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxResponseBytes: number;
  idempotent: boolean;
  retries: number;
}

export interface CallIds {
  conversationId: string;
  turnId?: string;
  callId?: string;
}

export interface HttpToolResult {
  content: string;
  isError: boolean;
  /** Attempts made (1 + retries used). */
  attempts: number;
}

const MAX_REDIRECTS = 3;
/** How much of a failed answer's body the model sees. */
const ERROR_BODY_CHARS = 500;
/** How much of a failed answer's body is read (the rest is cancelled): room for ERROR_BODY_CHARS in any UTF-8. */
const ERROR_BODY_BYTES = 8 * 1024;
/** The statuses followed as redirects (with a Location); any other 3xx is a failure. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 5_000;

type Attempt =
  | { ok: true; status: number; text: string }
  | { ok: false; message: string; retryable: boolean; retryAfterMs?: number };

export async function callHttpTool(
  spec: HttpToolSpec,
  { input, ids, allowLoopback }: { input: unknown; ids: CallIds; allowLoopback: boolean },
): Promise<HttpToolResult> {
  const body = JSON.stringify(input ?? {});
  const maxAttempts = 1 + (spec.idempotent ? spec.retries : 0);
  let last: Attempt | null = null;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (attempt > 1)
      await sleep(
        Math.min(
          BACKOFF_MAX_MS,
          last && !last.ok && last.retryAfterMs !== undefined
            ? last.retryAfterMs
            : BACKOFF_BASE_MS * 2 ** (attempt - 2),
        ),
      );
    last = await attemptOnce(spec, { body, ids, allowLoopback });
    if (last.ok) return { content: last.text, isError: false, attempts: attempt };
    // A retried call that ends on an error not retried (a 503, then a 404) says so too.
    if (!last.retryable) return failedAfter(last.message, { attempts: attempt, headers: spec.headers });
  }
  const failed = last as Extract<Attempt, { ok: false }>;
  return failedAfter(failed.message, { attempts: maxAttempts, headers: spec.headers });
}

/** A failure's result, with "(after N attempts)" when more than one attempt was made. */
function failedAfter(
  message: string,
  { attempts, headers }: { attempts: number; headers: Record<string, string> },
): HttpToolResult {
  return {
    content: scrub(attempts > 1 ? `${message} (after ${attempts} attempts)` : message, headers),
    isError: true,
    attempts,
  };
}

async function attemptOnce(
  spec: HttpToolSpec,
  { body, ids, allowLoopback }: { body: string; ids: CallIds; allowLoopback: boolean },
): Promise<Attempt> {
  const signal = AbortSignal.timeout(spec.timeoutMs);
  const opts = { allowLoopback };
  const first = checkOutboundUrl(spec.endpoint, opts);
  if (!first.ok) return { ok: false, message: `${spec.name}: endpoint refused: ${first.reason}`, retryable: false };
  let url = first.url;
  let method = "POST";
  let sendBody: string | undefined = body;
  let ownHeaders = true;
  try {
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = {
        ...(ownHeaders ? sendable(spec.headers) : {}),
        "content-type": "application/json",
        "x-tool-name": spec.name,
        "x-conversation-id": ids.conversationId,
        ...(ids.turnId ? { "x-turn-id": ids.turnId } : {}),
        ...(ids.callId ? { "x-tool-call-id": ids.callId, "idempotency-key": ids.callId } : {}),
      };
      if (!sendBody) delete headers["content-type"];
      const res = await fetch(url, { method, headers, body: sendBody, redirect: "manual", signal });
      // Only these are redirects; another 3xx (300, 304, 305) is an HTTP <status> failure, Location or not.
      if (REDIRECTS.has(res.status) && res.headers.has("location")) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS)
          return { ok: false, message: `${spec.name}: more than ${MAX_REDIRECTS} redirects`, retryable: false };
        const location = resolvedLocation(res.headers.get("location") ?? "", url);
        if (location === null)
          return {
            ok: false,
            message: `${spec.name}: redirect to a refused URL: not a valid URL`,
            retryable: false,
          };
        const next = checkOutboundUrl(location, opts);
        if (!next.ok)
          return { ok: false, message: `${spec.name}: redirect to a refused URL: ${next.reason}`, retryable: false };
        // The tool's headers (its credentials) go to its own origin only, as browsers do with Authorization.
        if (next.url.origin !== url.origin) ownHeaders = false;
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
          method = "GET";
          sendBody = undefined;
        }
        url = next.url;
        continue;
      }
      if (res.status < 200 || res.status >= 300) {
        // A failed answer's body is read only up to ERROR_BODY_BYTES, whatever maxResponseBytes: a
        // large 5xx/429 page is still that status (and retried), never "response larger than …".
        const read = await readHead(res, errorBodyCap(spec.headers));
        const retryable = res.status === 429 || res.status >= 500;
        const retryAfter = Number(res.headers.get("retry-after"));
        return {
          ok: false,
          // Withheld before the cut: a secret cut in two would no longer match, and its first part would stay.
          message: `${spec.name}: HTTP ${res.status}${read.text ? `: ${withheldAndCut(read.text, spec.headers, ERROR_BODY_CHARS)}` : ""}`,
          retryable,
          ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
        };
      }
      const read = await readCapped(res, spec.maxResponseBytes);
      // The cap holds for what is stored too: the body with the tool's header values withheld,
      // longer when the endpoint echoes them (each match becomes "[<header name> withheld]").
      const text = read.ok ? scrub(read.text, spec.headers) : "";
      if (!read.ok || new TextEncoder().encode(text).byteLength > spec.maxResponseBytes)
        return {
          ok: false,
          message: `${spec.name}: response larger than ${spec.maxResponseBytes} bytes (the tool's maxResponseBytes)${read.ok ? " with its header values withheld" : ""}`,
          retryable: false,
        };
      return { ok: true, status: res.status, text: text || `(empty response, HTTP ${res.status})` };
    }
  } catch (err) {
    if (signal.aborted)
      return {
        ok: false,
        message: `${spec.name}: no complete answer within ${spec.timeoutMs} ms (the tool's timeoutMs)`,
        retryable: false,
      };
    return {
      ok: false,
      message: `${spec.name}: network error: ${err instanceof Error ? err.message : String(err)}`,
      retryable: true,
    };
  }
}

/** A redirect's Location resolved against the URL that answered it; null when it is no URL (a refused hop, not a network error). */
function resolvedLocation(location: string, base: URL): string | null {
  try {
    return new URL(location, base).toString();
  } catch {
    return null;
  }
}

/**
 * How much of a failed answer is read: ERROR_BODY_BYTES, plus room for the tool's longest header
 * value written with every character escaped (`\u002B`), so a secret that starts within the
 * ERROR_BODY_CHARS shown is read whole and withheld, never cut in two by the read.
 */
/**
 * The tool's own headers without any the routes refuse (RESERVED_HEADERS, any case): a tool saved
 * before a name was refused still has it, and an `Upgrade` there turned the POST into a bodiless
 * handshake GET, a `Content-Type` joined the platform's own.
 */
function sendable(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !RESERVED_HEADERS.includes(name.toLowerCase())));
}

function errorBodyCap(headers: Record<string, string>): number {
  const longest = Math.max(0, ...Object.values(headers).map((v) => v.length));
  return ERROR_BODY_BYTES + 6 * longest;
}

/** The body's first `cap` bytes as text (a character cut at the end is U+FFFD); the rest is cancelled, never read. */
async function readHead(res: Response, cap: number): Promise<{ text: string }> {
  if (!res.body) return { text: "" };
  const reader = res.body.getReader();
  const all = new Uint8Array(cap);
  let size = 0;
  while (size < cap) {
    const { done, value } = await reader.read();
    if (done) return { text: new TextDecoder().decode(all.subarray(0, size)) };
    const take = Math.min(value.byteLength, cap - size);
    all.set(value.subarray(0, take), size);
    size += take;
  }
  await reader.cancel();
  return { text: new TextDecoder().decode(all.subarray(0, size)) };
}

/** The body as text, or not ok once it passes `cap` bytes (the rest is never read). */
async function readCapped(res: Response, cap: number): Promise<{ ok: true; text: string } | { ok: false }> {
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > cap) {
    await res.body?.cancel();
    return { ok: false };
  }
  if (!res.body) return { ok: true, text: "" };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel();
      return { ok: false };
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) all.set(c, at), (at += c.byteLength);
  return { ok: true, text: new TextDecoder().decode(all) };
}

/** A word of a header value shorter than this is not withheld on its own ("Bearer" alone is no secret). */
const MIN_SECRET_WORD = 8;
/** A whole header value shorter than this is not withheld: a 1-3 character value would match ordinary text. */
const MIN_SECRET_VALUE = 4;
/**
 * The words of one header value withheld on their own, its first ones: a real value has one to
 * three ("Bearer <token>"); a value of 4,096 characters of words would otherwise make every result
 * a search for hundreds of them (the whole value is still withheld).
 */
export const MAX_SECRET_WORDS = 8;
/** What fetch trims from either end of a header value (Fetch: HTTP whitespace). */
const HTTP_WHITESPACE_AROUND = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * An endpoint that echoes its request would put the tool's secret header values into the
 * transcript; they are replaced wherever they appear, as sent or as a JSON encoder or a URL may
 * write them (`\/`, `\"`, `\u002B` or `\u002b`, `%2B`). The whole value is withheld whatever its
 * length past a few characters (a short key is still a key); its first MAX_SECRET_WORDS words only
 * from MIN_SECRET_WORD on, where they could not match by chance. Each secret is looked for by
 * plain search in the text as written and in two decoded readings of it (decodedView), every match
 * mapped back: a pattern per secret with a choice of forms per character cost seconds on a large
 * result and backtracked without bound on a run of backslashes.
 */
export function scrub(text: string, headers: Record<string, string>): string {
  // The whole value before its words ("Bearer <token>": the token alone), longest first: where two
  // start at one place, the longest is the one replaced.
  // Each value as given and as sent: fetch trims the spaces and tabs around a header value, so
  // " k3y9Z " goes out (and comes back) as "k3y9Z".
  const secrets = Object.entries(headers)
    .flatMap(([name, value]) => {
      const sent = value.replace(HTTP_WHITESPACE_AROUND, "");
      const whole = [...new Set([value, sent])].filter((v) => v.length >= MIN_SECRET_VALUE);
      const words = sent
        .split(/\s+/)
        .filter((w) => w.length >= MIN_SECRET_WORD && !whole.includes(w))
        .slice(0, MAX_SECRET_WORDS);
      return [...whole, ...words].map((v) => [v, `[${name} withheld]`] as const);
    })
    .sort((a, b) => b[0].length - a[0].length);
  if (!secrets.length) return text;
  // Three readings of the text, each mapped back to it: as written, every escape read (JSON and
  // %XX), and JSON escapes only (a secret holding a literal "%2B" whose other characters a JSON
  // encoder escaped). Plain searches: a pattern per secret with a choice of forms per character
  // backtracks without bound on a run of backslashes.
  const views = [{ view: text, starts: null }, decodedView(text, true), decodedView(text, false)];
  const found: { from: number; to: number; label: string }[] = [];
  for (const [secret, label] of secrets)
    for (const { view, starts } of views)
      for (let k = view.indexOf(secret); k >= 0; k = view.indexOf(secret, k + 1))
        found.push({ from: starts ? starts[k] : k, to: starts ? starts[k + secret.length] : k + secret.length, label });
  // Leftmost first, the longest of those starting at one place; one overlapping a kept one widens
  // it, so no character of any secret found shows.
  found.sort((a, b) => a.from - b.from || b.to - a.to);
  let out = "";
  let done = 0;
  for (const f of found) {
    if (f.from < done) {
      if (f.to > done) done = f.to;
      continue;
    }
    out += text.slice(done, f.from) + f.label;
    done = f.to;
  }
  return out + text.slice(done);
}

/**
 * The text with the secrets withheld, then cut to `max` characters (and made well-formed, should
 * the cut split a surrogate pair). Never the other way round: a secret the cut splits would no
 * longer match whole, and the part before the cut would stay in the text.
 */
export function withheldAndCut(text: string, headers: Record<string, string>, max: number): string {
  return scrub(text, headers).slice(0, max).toWellFormed();
}

/** JSON's short escapes (RFC 8259 §7). */
const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** The character each JSON short escape stands for: `\/` is "/". */
const SHORT_ESCAPED: Record<string, string> = Object.fromEntries(
  Object.entries(JSON_SHORT).map(([char, written]) => [written[1], char]),
);
const isHex = (text: string, from: number, n: number) =>
  /^[0-9a-fA-F]+$/.test(text.slice(from, from + n)) && from + n <= text.length;

/**
 * The text with each JSON `\uXXXX` escape (hex in either case), JSON short escape and (with
 * `percent`) percent-encoded ASCII other than letters and digits read as the character it writes
 * (how encoders write some characters and not others), and where each of its characters starts in
 * the text (`starts[view.length]` is the text's length).
 */
function decodedView(text: string, percent: boolean): { view: string; starts: Uint32Array } {
  const starts = new Uint32Array(text.length + 1);
  const parts: string[] = [];
  let n = 0;
  let i = 0;
  let backslash = text.indexOf("\\");
  let pct = percent ? text.indexOf("%") : -1;
  while (i < text.length) {
    // Runs without an escape are copied whole: a character at a time costs a second on 1 MiB.
    if (backslash !== -1 && backslash < i) backslash = text.indexOf("\\", i);
    if (pct !== -1 && pct < i) pct = text.indexOf("%", i);
    const next = Math.min(backslash === -1 ? text.length : backslash, pct === -1 ? text.length : pct);
    if (next > i) {
      parts.push(text.slice(i, next));
      for (; i < next; i++) starts[n++] = i;
      continue;
    }
    const [char, length] = escapeAt(text, i, percent);
    starts[n++] = i;
    parts.push(char);
    i += length;
  }
  starts[n] = text.length;
  return { view: parts.join(""), starts };
}

/** The character the escape at `i` (a "\\" or "%") writes, and its length; itself, 1, when none. */
function escapeAt(text: string, i: number, percent: boolean): [string, number] {
  if (text[i] === "\\" && text[i + 1] === "u" && isHex(text, i + 2, 4))
    return [String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16)), 6];
  if (text[i] === "\\" && i + 1 < text.length && SHORT_ESCAPED[text[i + 1]] !== undefined)
    return [SHORT_ESCAPED[text[i + 1]], 2];
  if (percent && text[i] === "%" && isHex(text, i + 1, 2) && !/[A-Za-z0-9]/.test(percentChar(text, i)))
    return [percentChar(text, i), 3];
  return [text[i], 1];
}

/** The ASCII character `%XX` at `i` writes (past 0x7F: none, a byte of a longer UTF-8 character). */
const percentChar = (text: string, i: number): string => {
  const unit = Number.parseInt(text.slice(i + 1, i + 3), 16);
  return unit < 0x80 ? String.fromCharCode(unit) : "0";
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
