// D1 read replication through the Sessions API: every D1 statement of a request goes through one
// session, so reads may be served by a replica near the caller and still see the caller's own
// writes. The client carries the session's position between requests in the `x-d1-bookmark`
// header: a request that sends the bookmark of its last answer starts its session there (a
// replica serves it only once it has caught up with that point); one without starts anywhere for
// reads ("first-unconstrained") and at the primary for writes ("first-primary"). Every answer
// carries the session's latest bookmark back.
//
// A request that ran no statement in its session (a route with no D1 of its own: models, a turn, a
// transcript read from its object, a 404) answers the bookmark it was sent, or without one a recent
// position of this isolate's (the latest that a session here reached, when it was sent none): it
// read and wrote nothing, so any real position covers it, and this one costs no round trip. Only an
// isolate that has reached none yet reads one, once, at the nearest replica. A bookmark a client
// sent is never kept: it may name a position D1 never reached.
//
// A Durable Object writes D1 on its own binding, outside the request's session: a route whose object
// wrote for it says so (wroteElsewhere), and the answer's bookmark is then the latest of the
// session's and those writes', so a request sent with it sees them too. An object that answers the
// bookmark its writes reached costs nothing more; one that cannot (a conversation's delete) makes
// the answer read the primary's current position once, after the route.
import type { Context, MiddlewareHandler } from "hono";
import { sessionDatabase } from "../../services/d1-session-database";
import { badRequest } from "./errors";
import type { AppEnv } from "./types";

export const BOOKMARK_HEADER = "x-d1-bookmark";
// D1 bookmarks are hyphen-separated hex fields (e.g. 00000085-0000024c-00004c6d-8e61…); anything
// else would be an opaque error from D1 after the route had started its work.
export const BOOKMARK = /^[0-9a-f]{1,16}(-[0-9a-f]{1,64}){1,7}$/i;
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What a request's objects wrote outside its session: their bookmarks, and whether one did not say. */
interface Elsewhere {
  bookmarks: string[];
  unknown: boolean;
}
const elsewhere = new WeakMap<Context<AppEnv>, Elsewhere>();

/**
 * A D1 write this request caused outside its session (a Durable Object's, on its own binding): the
 * bookmark it reached, which the answer's then covers; null when the writer cannot say, and the
 * answer then carries the primary's position, read once after the route. Call it before anything
 * that may fail after the write (for a writer naming no position, before asking it to write): an
 * error's answer then covers it too.
 */
export function wroteElsewhere(c: Context<AppEnv>, bookmark: string | null): void {
  const seen = elsewhere.get(c) ?? { bookmarks: [], unknown: false };
  if (bookmark) seen.bookmarks.push(bookmark);
  else seen.unknown = true;
  elsewhere.set(c, seen);
}

/**
 * The latest position this isolate's sessions reached (except those started at a bookmark sent):
 * what a request that ran no statement and was sent none answers.
 */
let isolateBookmark: string | null = null;

/** Forgets the isolate's position, as a fresh isolate starts (tests). */
export function forgetIsolateBookmark(): void {
  isolateBookmark = null;
}

/** Bookmarks are fixed-width hex: position order is string order. */
function latest(marks: readonly (string | null | undefined)[]): string | undefined {
  return marks.reduce<string | undefined>((max, b) => (b && (!max || b > max) ? b : max), undefined);
}

/** A real position for a request that read and wrote nothing: the isolate's, or the nearest replica's once. */
async function anyPosition(db: D1Database): Promise<string | null> {
  if (isolateBookmark) return isolateBookmark;
  const session = db.withSession("first-unconstrained");
  await session.prepare("SELECT 1").first();
  return session.getBookmark();
}

/** The primary's current position: a read there answers it. */
async function primaryBookmark(db: D1Database): Promise<string | null> {
  const session = db.withSession("first-primary");
  await session.prepare("SELECT 1").first();
  return session.getBookmark();
}

/**
 * The latest of the session's bookmark (or the one sent) and those of the writes made elsewhere;
 * for a request that has none of these, a position of the isolate's (anyPosition).
 */
async function answered(
  c: Context<AppEnv>,
  at: { db: D1Database; latest: string | undefined },
): Promise<string | undefined> {
  const seen = elsewhere.get(c);
  const marks: (string | null | undefined)[] = [...(seen?.bookmarks ?? []), at.latest];
  // Best effort: a primary (or replica) that cannot be read leaves the answer the positions it was given.
  if (seen?.unknown) marks.push(await primaryBookmark(at.db).catch(() => null));
  return latest(marks) ?? (await anyPosition(at.db).catch(() => null)) ?? undefined;
}

export const d1Session: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER);
  if (sent !== undefined && (sent.length > 256 || !BOOKMARK.test(sent)))
    throw badRequest(
      `${BOOKMARK_HEADER}: not a D1 bookmark (send back the value of a previous answer's ${BOOKMARK_HEADER} header)`,
    );
  const db = c.env.DB;
  const session = db.withSession(sent || (READS.has(c.req.method) ? "first-unconstrained" : "first-primary"));
  // A key is looked up at the primary, never through the session (a replica may lack a new key, or a revocation).
  c.set("primaryEnv", c.env);
  c.env = { ...c.env, DB: sessionDatabase(db, session) };
  try {
    await next();
  } finally {
    const bookmark = await answered(c, { db, latest: session.getBookmark() ?? sent });
    // Positions D1 gave this isolate only: a session started at a bookmark sent is not one.
    if (!sent) isolateBookmark = latest([isolateBookmark, bookmark]) ?? null;
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
