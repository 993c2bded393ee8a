// A request through the chat app with its real bindings but some variables changed (the rate limits
// a test sets, a model provider): the app's own fetch, its background work awaited.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { app } from "../../workers/chat/app";
import type { ResponseOf } from "../route-types";
import type { Method } from "./helpers";

export async function callWith<M extends Method, P extends string>(
  vars: Record<string, unknown>,
  request: { method: M; path: P; key: string; body?: unknown; headers?: Record<string, string> },
) {
  const { method, path, key, body } = request;
  const ctx = createExecutionContext();
  // No key: no authorization header at all.
  const headers: Record<string, string> = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...request.headers };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, ...vars } as Env,
    ctx,
  );
  const json = (await res.json().catch(() => null)) as ResponseOf<M, P>;
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, json };
}
