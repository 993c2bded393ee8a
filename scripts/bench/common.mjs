// Shared helpers of the benchmarks: the typed client (client/, bundled once per run) for the
// local stack, and a few statistics.
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT, startStack } from "../stack.mjs";

export const KEY = "dev-local-key";

let clientModule;
/** client/index.ts, compiled for Node on first use. */
async function loadClient() {
  clientModule ??= importTypeScript("client/index.ts");
  return clientModule;
}

/** A TypeScript module of the project (path from the root), bundled for Node and imported: the benches use core/ as it ships. */
export async function importTypeScript(path) {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-ts-"));
  const outfile = join(dir, "module.mjs");
  await build({
    entryPoints: [join(ROOT, path)],
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "silent",
  });
  try {
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The typed client for the dev tenant on `base` (options: see client/index.ts ClientOptions). */
export async function apiClient(base, options = {}) {
  return (await loadClient()).createClient({ baseUrl: base, key: KEY, ...options });
}

export async function get(base, path) {
  const r = await (await apiClient(base)).send("GET", path);
  if (!r.ok) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.data;
}

export async function post(base, path, body) {
  const r = await (await apiClient(base)).send("POST", path, {
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return { json: r.data, timing: r.headers.get("server-timing") ?? "" };
}

export const dur = (timing, name) => Number(new RegExp(`${name};dur=(\\d+(?:\\.\\d+)?)`).exec(timing)?.[1] ?? NaN);
export const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Replay chars of one stored message, counted as the server counts them (core/render.messageChars). */
export function messageChars(m) {
  let n = 0;
  for (const b of m.content) {
    if (b.type === "text") n += b.text.length;
    else if (b.type === "tool_use" || b.type === "server_tool_use") n += b.name.length + JSON.stringify(b.input).length;
    else if (b.type === "tool_result")
      n +=
        typeof b.content === "string"
          ? b.content.length
          : b.content.map((x) => (x.type === "text" ? x.text : "")).join("\n").length;
    // As core/render.ts weighs them: thinking by its text and its signature, a server result by what it replays.
    else if (b.type === "thinking") n += b.thinking.length + b.signature.length;
    else if (b.type === "redacted_thinking") n += b.data.length;
    else if (b.type.endsWith("_tool_result")) n += JSON.stringify(b.content).length;
  }
  return n;
}

/**
 * Runs `fn(baseUrl, persistDir)` against a throwaway stack on a free loopback port, then stops it
 * (`persistDir` holds the stack's local state: D1, R2 and the Durable Objects' SQLite files).
 */
export async function withStack(fn, vars = {}) {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-bench-"));
  // Benchmarks fire far more than a client would: per-key rate limits off.
  const stack = await startStack({
    persistTo: dir,
    vars: {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "0",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
      ...vars,
    },
  });
  try {
    return await fn(stack.baseUrl, dir);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
