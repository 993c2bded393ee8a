// Sortable unique ids: a 10-char Crockford base32 millisecond timestamp followed by 16 random
// chars (ULID layout), behind a short type prefix. Ids made later sort later, so "newest first"
// is "id descending" and a message id alone orders messages across conversations.

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function randomChars(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

let lastMs = 0;
let lastRandom = "";

/** Monotonic within an isolate: two ids in the same millisecond still sort in creation order. */
export function sortableId(prefix: string, now = Date.now()): string {
  if (now <= lastMs) {
    lastRandom = increment(lastRandom);
    return `${prefix}_${encodeTime(lastMs)}${lastRandom}`;
  }
  lastMs = now;
  lastRandom = randomChars(16);
  return `${prefix}_${encodeTime(now)}${lastRandom}`;
}

function increment(s: string): string {
  const chars = s.split("");
  for (let i = chars.length - 1; i >= 0; i--) {
    const v = ALPHABET.indexOf(chars[i]);
    if (v < 31) {
      chars[i] = ALPHABET[v + 1];
      return chars.join("");
    }
    chars[i] = ALPHABET[0];
  }
  return chars.join("");
}

/** Ids accepted in paths and tool arguments: a known prefix and the ULID body. Nothing else. */
export const ID_PATTERN = /^[a-z]{2,5}_[0-9A-HJKMNP-TV-Z]{26}$/;
export const isId = (prefix: string, value: unknown): value is string =>
  typeof value === "string" && value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);

export function randomToken(bytes = 32): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let bin = "";
  for (const b of raw) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Two independent 32-bit FNV-1a lanes over `text`'s UTF-16 units (the second seeded by its length):
 * a fast content hash where a collision is harmless but unlikely (a memo key, a fingerprint), not a
 * digest (sha256Hex is that).
 */
export function fnvLanes(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return [a >>> 0, b >>> 0];
}
