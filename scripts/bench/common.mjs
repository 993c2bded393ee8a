// Shared helpers of the benchmarks: a tiny client for the local stack and a few statistics.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "../stack.mjs";

const AUTH = { authorization: "Bearer dev-local-key", "content-type": "application/json" };

export async function get(base, path) {
  const res = await fetch(base + path, { headers: AUTH });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return json;
}

export async function post(base, path, body) {
  const res = await fetch(base + path, { method: "POST", headers: AUTH, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return { json, timing: res.headers.get("server-timing") ?? "" };
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
    else if (b.type === "tool_use") n += b.name.length + JSON.stringify(b.input).length;
    else if (b.type === "tool_result") n += typeof b.content === "string" ? b.content.length : b.content.map((x) => (x.type === "text" ? x.text : "")).join("\n").length;
  }
  return n;
}


/** Runs `fn(baseUrl)` against a throwaway stack on a free loopback port, then stops it. */
export async function withStack(fn) {
  const dir = mkdtempSync(join(tmpdir(), "context-chat-bench-"));
  // Benchmarks fire far more than a client would: per-key rate limits off.
  const stack = await startStack({ persistTo: dir, vars: { RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "0" } });
  try {
    return await fn(stack.baseUrl);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
