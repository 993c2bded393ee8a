// D1 read replication through the Sessions API: every D1 statement of a request goes through one
// session, so reads may be served by a replica near the caller and still see the caller's own
// writes. The client carries the session's position between requests in the `x-d1-bookmark`
// header: a request that sends the bookmark of its last answer starts its session there (a
// replica serves it only once it has caught up with that point); one without starts anywhere for
// reads ("first-unconstrained") and at the primary for writes ("first-primary"). Every answer
// carries the session's latest bookmark back.
import type { MiddlewareHandler } from "hono";
import { badRequest } from "./errors";
import type { AppEnv } from "./types";

export const BOOKMARK_HEADER = "x-d1-bookmark";
// D1 bookmarks are hyphen-separated hex fields (e.g. 00000085-0000024c-00004c6d-8e61…); anything
// else would be an opaque error from D1 after the route had started its work.
export const BOOKMARK = /^[0-9a-f]{1,16}(-[0-9a-f]{1,64}){1,7}$/i;
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The request's D1: a session seen through the D1Database interface every service takes. */
export function sessionDatabase(db: D1Database, session: D1DatabaseSession): D1Database {
  return {
    prepare: (query) => session.prepare(query),
    batch: (statements) => session.batch(statements),
    // exec and dump bypass sessions; nothing in a request uses them.
    exec: (query) => db.exec(query),
    dump: () => db.dump(),
    // A read that must see the primary (a cortex route, then cached on its word) opens its own
    // session there; any other is the request's.
    withSession: (start?: string) => (start === "first-primary" ? db.withSession("first-primary") : session),
  } as D1Database;
}

export const d1Session: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER);
  if (sent !== undefined && (sent.length > 256 || !BOOKMARK.test(sent)))
    throw badRequest(
      `${BOOKMARK_HEADER}: not a D1 bookmark (send back the value of a previous answer's ${BOOKMARK_HEADER} header)`,
    );
  const session = c.env.DB.withSession(sent || (READS.has(c.req.method) ? "first-unconstrained" : "first-primary"));
  c.env = { ...c.env, DB: sessionDatabase(c.env.DB, session) };
  try {
    await next();
  } finally {
    const bookmark = session.getBookmark() ?? sent;
    if (bookmark && c.res.status !== 101) setHeader(c, bookmark);
  }
};

// A response straight from a Durable Object or R2 has immutable headers: copy it once to add ours.
function setHeader(c: Parameters<MiddlewareHandler<AppEnv>>[0], bookmark: string): void {
  try {
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  } catch {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(BOOKMARK_HEADER, bookmark);
  }
}
