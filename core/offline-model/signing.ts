/**
 * Opaque signed values the offline model hands out and later checks: thinking signatures,
 * redacted_thinking data, web search `encrypted_content` and citation `encrypted_index`.
 *
 * A value is base64 of `<payload JSON>~<MAC>`, the MAC an HMAC-SHA-256 (truncated to 128 bits)
 * under a fixed key. So it is stateless and deterministic (the same payload always gives the same
 * value, in any isolate), any edit, truncation or emptying is detected, and the payload carries
 * what the check needs (who produced the block, what it said, what it was bound to). The key is
 * public: this stands in for Anthropic's encryption, it is not a security boundary.
 */
import { hmacSha256, toHex } from "./sha256";

const KEY = "offline-model/signing/v1";
const MAC_HEX = 32;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function toBase64(text: string): string {
  let binary = "";
  for (const byte of encoder.encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(value: string): string | null {
  try {
    const binary = atob(value);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

const macOf = (purpose: string, json: string) => toHex(hmacSha256(KEY, `${purpose}\n${json}`)).slice(0, MAC_HEX);

/** Seals `payload` for one purpose ("thinking", "search", …): a value opened only under that purpose. */
export function seal(purpose: string, payload: object): string {
  const json = JSON.stringify(payload);
  return toBase64(`${json}~${macOf(purpose, json)}`);
}

/** The payload of a value sealed for `purpose`, or null when it is not one (edited, cut, empty, foreign). */
export function open<T extends object>(purpose: string, value: unknown): T | null {
  if (typeof value !== "string" || value === "") return null;
  const text = fromBase64(value);
  if (text === null) return null;
  const at = text.lastIndexOf("~");
  if (at < 0) return null;
  const json = text.slice(0, at);
  if (text.slice(at + 1) !== macOf(purpose, json)) return null;
  try {
    const payload: unknown = JSON.parse(json);
    return payload !== null && typeof payload === "object" ? (payload as T) : null;
  } catch {
    return null;
  }
}

/** A short stable id for a sealed value (its MAC), used to chain blocks to one another. */
export function sealId(value: string): string {
  const text = fromBase64(value) ?? value;
  return text.slice(text.lastIndexOf("~") + 1, text.lastIndexOf("~") + 17);
}
