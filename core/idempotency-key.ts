// Idempotency keys for turns: the `Idempotency-Key` header of POST …/messages and the
// `idempotencyKey` field of websocket `send` frames share one format and one meaning.
import { z } from "zod";
import { sha256Hex } from "./ids";

export const IDEMPOTENCY_KEY_MAX = 255;
/** A key answers with its first outcome for this long; after that it is forgotten. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;

// Printable ASCII, no space at either end: a header value loses those on the way, so a key
// sent both ways must not mean two things.
const KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
const KEY_RULE = `1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters, not starting or ending with a space`;

export const idempotencyKeySchema = z
  .string()
  .max(IDEMPOTENCY_KEY_MAX, `at most ${IDEMPOTENCY_KEY_MAX} characters`)
  .regex(KEY_PATTERN, KEY_RULE);

/** Null when the key is well-formed, else what is wrong with it. */
export function idempotencyKeyProblem(key: string): string | null {
  const parsed = idempotencyKeySchema.safeParse(key);
  return parsed.success ? null : parsed.error.issues[0].message;
}

/**
 * A digest of what a turn request asks for, independent of how its JSON was spelled (key order),
 * so a retry of the same request matches and a different one under the same key is caught.
 */
export function requestFingerprint(request: unknown): Promise<string> {
  return sha256Hex(canonicalJson(request));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}
