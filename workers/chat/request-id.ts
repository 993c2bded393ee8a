// The id of one request to the chat worker: the `request-id` header of every answer, named by the
// request's log lines, so a failed call a user reports is found in the logs. The edge's cf-ray when the request has one (Cloudflare sets it), else a
// fresh id; a client's own `request-id` is never taken (it could be forged into the logs).
import type { Context, MiddlewareHandler } from "hono";
import { sortableId } from "../../core/ids";
import type { AppEnv } from "./types";

export const REQUEST_ID_HEADER = "request-id";

/** A ray id as the edge writes it (`8f1a2b3c4d5e6f70-LHR`); anything else is no ray of the edge's. */
const RAY = /^[0-9A-Za-z]{1,32}(-[A-Za-z]{3,4})?$/;

/**
 * The request's id, the same however often asked: the one the first middleware put in the
 * request's context, else (a context no middleware has run for) made now and kept there.
 */
export function requestIdOf(c: Context<AppEnv>): string {
  let id = c.get("requestId");
  if (!id) {
    const ray = c.req.header("cf-ray");
    id = ray && RAY.test(ray) ? ray : sortableId("req");
    c.set("requestId", id);
  }
  return id;
}

/** The first middleware: every answer leaves with the request's id, an upgrade's 101 included. */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = requestIdOf(c);
  await next();
  const res = c.res;
  try {
    res.headers.set(REQUEST_ID_HEADER, id);
  } catch {
    // Straight from a Durable Object or R2, its headers are immutable: copied once to add ours.
    const headers = new Headers(res.headers);
    headers.set(REQUEST_ID_HEADER, id);
    c.res = undefined;
    c.res =
      res.status === 101
        ? new Response(null, { status: 101, statusText: res.statusText, headers, webSocket: res.webSocket })
        : new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
};
