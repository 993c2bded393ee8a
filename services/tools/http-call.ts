// One call of a tenant's HTTP tool. The platform POSTs the call's input as the JSON body, names
// the call in headers (X-Tool-Name, X-Conversation-Id, X-Turn-Id, X-Tool-Call-Id, and
// Idempotency-Key = the tool_use id, the same on every retry), and adds the tool's own headers.
// Every hop is checked against the outbound URL rules (redirects are followed by hand), the body
// is read up to the tool's cap within its timeout, and every failure comes back as a readable
// error result, never a thrown error: the model decides what to do next.
import { checkOutboundUrl } from "../../core/outbound-url";

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
    if (last.ok) return { content: scrub(last.text, spec.headers), isError: false, attempts: attempt };
    if (!last.retryable) return { content: scrub(last.message, spec.headers), isError: true, attempts: attempt };
  }
  const failed = last as Extract<Attempt, { ok: false }>;
  return {
    content: scrub(
      maxAttempts > 1 ? `${failed.message} (after ${maxAttempts} attempts)` : failed.message,
      spec.headers,
    ),
    isError: true,
    attempts: maxAttempts,
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
        ...(ownHeaders ? spec.headers : {}),
        "content-type": "application/json",
        "x-tool-name": spec.name,
        "x-conversation-id": ids.conversationId,
        ...(ids.turnId ? { "x-turn-id": ids.turnId } : {}),
        ...(ids.callId ? { "x-tool-call-id": ids.callId, "idempotency-key": ids.callId } : {}),
      };
      if (!sendBody) delete headers["content-type"];
      const res = await fetch(url, { method, headers, body: sendBody, redirect: "manual", signal });
      if (res.status >= 300 && res.status < 400 && res.headers.has("location")) {
        await res.body?.cancel();
        if (hop >= MAX_REDIRECTS)
          return { ok: false, message: `${spec.name}: more than ${MAX_REDIRECTS} redirects`, retryable: false };
        const next = checkOutboundUrl(new URL(res.headers.get("location")!, url).toString(), opts);
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
      const read = await readCapped(res, spec.maxResponseBytes);
      if (!read.ok)
        return {
          ok: false,
          message: `${spec.name}: response larger than ${spec.maxResponseBytes} bytes (the tool's maxResponseBytes)`,
          retryable: false,
        };
      if (res.status < 200 || res.status >= 300) {
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
      return { ok: true, status: res.status, text: read.text || `(empty response, HTTP ${res.status})` };
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

/**
 * An endpoint that echoes its request would put the tool's secret header values into the
 * transcript; they are replaced wherever they appear, as sent or as a JSON encoder or a URL may
 * write them (`\/`, `\"`, `\u002B` or `\u002b`, `%2B`). The whole value is withheld whatever its
 * length past a few characters (a short key is still a key); its first MAX_SECRET_WORDS words only
 * from MIN_SECRET_WORD on, where they could not match by chance. One pattern per secret, each
 * character in any of its written forms (writtenAnyWay): the word cap bounds the patterns to
 * (1 + MAX_SECRET_WORDS) a header, where a value of 4,096 characters of words once made hundreds.
 */
export function scrub(text: string, headers: Record<string, string>): string {
  // The whole value first, then its words ("Bearer <token>": the token alone), longest first.
  const secrets = Object.entries(headers)
    .flatMap(([name, value]) =>
      [
        ...(value.length >= MIN_SECRET_VALUE ? [value] : []),
        ...value
          .split(/\s+/)
          .filter((w) => w.length >= MIN_SECRET_WORD && w !== value)
          .slice(0, MAX_SECRET_WORDS),
      ].map((v) => [v, `[${name} withheld]`] as const),
    )
    .sort((a, b) => b[0].length - a[0].length);
  return secrets.reduce((out, [value, label]) => out.replace(writtenAnyWay(value), () => label), text);
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

const regExpLiteral = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
/** Hex digits matched in either case (`\u002B` and `\u002b` are the same escape). */
const anyCaseHex = (hex: string) => [...hex].map((h) => (/[a-f]/.test(h) ? `[${h}${h.toUpperCase()}]` : h)).join("");

/**
 * A pattern matching `value` with each of its characters (UTF-16 code units) as written, as a
 * JSON `\uXXXX` escape, as a JSON short escape, or (ASCII other than letters and digits)
 * percent-encoded: any mix, as encoders escape some characters and not others.
 */
function writtenAnyWay(value: string): RegExp {
  let source = "";
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    const unit = value.charCodeAt(i);
    const forms = [regExpLiteral(char), `\\\\u${anyCaseHex(unit.toString(16).padStart(4, "0"))}`];
    if (JSON_SHORT[char]) forms.push(regExpLiteral(JSON_SHORT[char]));
    if (unit < 0x80 && !/[A-Za-z0-9]/.test(char)) forms.push(`%${anyCaseHex(unit.toString(16).padStart(2, "0"))}`);
    source += `(?:${forms.join("|")})`;
  }
  return new RegExp(source, "g");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
