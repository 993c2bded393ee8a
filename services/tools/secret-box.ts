// Secrets of a tenant's tools (an HTTP tool's headers, an MCP server's auth header) are stored
// sealed: AES-256-GCM under TOOL_SECRETS_KEY, a Worker secret (32 bytes, base64). Each sealed value
// is bound to its owner and field (additional data), so a sealed value copied into another row or
// tenant does not open. The API never returns a secret and nothing logs one.
import { envConfig } from "../../core/env-config";

export class ToolSecretsNotConfigured extends Error {
  readonly type = "tool_secrets_not_configured";
  readonly status = 503;
  constructor() {
    super(
      "storing a tool secret needs the Worker secret TOOL_SECRETS_KEY (32 random bytes, base64): wrangler secret put TOOL_SECRETS_KEY",
    );
  }
}

const VERSION = "v1";
const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(env: { TOOL_SECRETS_KEY?: string }): Promise<CryptoKey> {
  const raw = envConfig(env).TOOL_SECRETS_KEY;
  if (!raw) throw new ToolSecretsNotConfigured();
  let key = keys.get(raw);
  if (!key) {
    const bytes = Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
    if (bytes.length !== 32) throw new Error("TOOL_SECRETS_KEY must be 32 bytes, base64-encoded");
    key = crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(raw, key);
  }
  return key;
}

/** Bytes per String.fromCharCode call: spreading a whole sealed value (up to some 250 KB of headers) overflows the stack. */
const CHUNK = 0x2000;
function b64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += CHUNK) bin += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(bin);
}
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** Seals `plain` for `owner` (e.g. "tenant:tool_id:headers"): "v1.<iv>.<ciphertext>". */
export async function seal(env: { TOOL_SECRETS_KEY?: string }, owner: string, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(owner) },
    await keyFor(env),
    new TextEncoder().encode(plain),
  );
  return `${VERSION}.${b64(iv)}.${b64(new Uint8Array(data))}`;
}

/** Opens a value sealed for the same owner under the same key; throws otherwise. */
export async function open(env: { TOOL_SECRETS_KEY?: string }, owner: string, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== VERSION || !iv || !data) throw new Error("not a sealed tool secret");
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(iv), additionalData: new TextEncoder().encode(owner) },
    await keyFor(env),
    unb64(data),
  );
  return new TextDecoder().decode(plain);
}
