// The typed client of the context-chat API. Its types are generated from the OpenAPI document
// (client/api-types.gen.ts, `npm run openapi`), so a route, parameter or body the server does not
// have is a compile error. Streams: a turn's SSE events and the websocket's frames are async
// iterators; messages() pages the transcript by the seq cursor, and the socket resumes from it.
import type { Routes, Schemas } from "./api-types.gen";
import { ConversationSocket } from "./socket";
import { sseData } from "./sse";

export type { Routes, Schemas };
export { ConversationSocket };
export type { ClientFrame, ServerFrame } from "./socket";
export type Route = keyof Routes;
export type TurnEvent = Schemas["TurnEvent"];
export type Message = Schemas["Message"];
export type ErrorBody = Schemas["Error"];
/** A card of GET /v1/conversations/:id/timeline (a compaction, a model change), paged by card id. */
export type TimelineCard = Schemas["TimelineCard"];

export type RequestOptions<R extends Route> = (Routes[R]["path"] extends undefined
  ? { path?: undefined }
  : { path: Routes[R]["path"] }) &
  (Routes[R]["body"] extends undefined ? { body?: undefined } : { body: Routes[R]["body"] }) &
  (Routes[R]["query"] extends undefined ? { query?: undefined } : { query?: Routes[R]["query"] }) & {
    /** Sent over the client's own (its key, the JSON content type): a caller's header wins whatever its case. */
    headers?: Record<string, string>;
    /** Aborts the request (passed to fetch). */
    signal?: AbortSignal;
  };
// The options may be left out when nothing in them is required.
type Args<R extends Route> =
  Partial<RequestOptions<R>> extends RequestOptions<R> ? [RequestOptions<R>?] : [RequestOptions<R>];

export interface ApiResponse<T> {
  status: number;
  ok: boolean;
  /** The parsed body: the route's answer when ok, an ErrorBody otherwise (undefined when empty or not JSON). */
  data: T;
  error: ErrorBody["error"] | null;
  headers: Headers;
  /** The body decoded as UTF-8. */
  text: string;
  /** The body's bytes as received (a binary answer, e.g. an attachment's content, is not text). */
  bytes: Uint8Array;
}

export interface ClientOptions {
  /**
   * The API's origin, and the path it is served under, if any (`https://host/api`, with or without
   * a trailing slash): every route's path (`/v1/…`), the socket's included, goes after that path.
   */
  baseUrl: string;
  /** The API key (or, for /v1/admin routes, the admin token). */
  key?: string;
  fetch?: typeof fetch;
  /** Websocket auth: the key in a header (Node, servers) or a single-use ticket (browsers). Default: header. */
  socketAuth?: "header" | "ticket";
  /** Opens a websocket and resolves once it is open (default: the global WebSocket; `init` carries the auth headers). */
  webSocket?: (url: string, init: { headers?: Record<string, string> } | undefined) => Promise<WebSocket>;
}

/** The seconds of a Retry-After header (delta-seconds or an HTTP date), or undefined without one. */
export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export class ApiError extends Error {
  /** The answer's Retry-After in seconds (429s, and 409s of a busy turn), when it had one. */
  readonly retryAfterSeconds: number | undefined;
  /** The answer's request-id header: quote it when reporting the error. */
  readonly requestId: string | undefined;
  /**
   * The Idempotency-Key the refused or cut turn request was sent with (turn() and toolResults()
   * set it): send the request again with it to learn the first attempt's outcome.
   */
  idempotencyKey?: string;
  constructor(
    readonly status: number,
    readonly body: unknown,
    /** The answer's headers (absent when the error was not an HTTP answer). */
    readonly headers?: Headers,
  ) {
    super(`${status}: ${JSON.stringify(body)?.slice(0, 300)}`);
    this.retryAfterSeconds = retryAfterSeconds(headers);
    this.requestId = headers?.get("request-id") ?? undefined;
  }
}

/**
 * The events of a turn request (turn(), toolResults()) and the Idempotency-Key it carries: the
 * caller's, or one made for the call, so a request whose stream broke (or whose fetch failed) can
 * always be sent again under it, answered with the first attempt's outcome rather than run twice.
 */
export interface TurnStream extends AsyncGenerator<TurnEvent> {
  readonly idempotencyKey: string;
}

/** A fresh Idempotency-Key: 128 random bits in hex (getRandomValues: browsers have it outside secure contexts too). */
export function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A turn's stream is done for; `cause` the error that cut it (a dropped connection's read error), if any. */
function interrupted(body: ErrorBody, cause?: unknown): ApiError {
  const error = new ApiError(502, body);
  if (cause !== undefined) error.cause = cause;
  return error;
}

/** `defaults` with each of `given` set over it: a caller's header replaces a default whatever its case. */
function mergedHeaders(defaults: Record<string, string>, given?: Record<string, string> | Headers): Headers {
  const headers = new Headers(defaults);
  if (given instanceof Headers) given.forEach((value, name) => headers.set(name, value));
  else for (const [name, value] of Object.entries(given ?? {})) headers.set(name, value);
  return headers;
}

/** The error of a turn whose event stream ended before its turn_end (as the server's JSON answer names it). */
const TURN_INTERRUPTED: ErrorBody = {
  error: {
    type: "turn_interrupted",
    message:
      "the turn's event stream ended before the turn did; what it saved is in the transcript (messages()), or send it again with the same Idempotency-Key (this error's idempotencyKey) to learn its outcome",
  },
};

const parse = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
};

/** The `error` of an error body, or null when the body is not one. */
function errorOf(data: unknown): ErrorBody["error"] | null {
  if (typeof data !== "object" || data === null || !("error" in data)) return null;
  const error = data.error;
  return typeof error === "object" && error !== null && "type" in error && "message" in error
    ? (error as ErrorBody["error"])
    : null;
}

/** How one turn request streams: its key, the caller's signal, and `left`, aborted when the iteration is left. */
interface StreamOptions {
  idempotencyKey: string;
  signal?: AbortSignal;
  left: AbortSignal;
}

export class Client {
  constructor(readonly options: ClientOptions) {}

  /** The same client with another key (another tenant, or the admin token). */
  as(key: string): Client {
    return new Client({ ...this.options, key });
  }

  /** `path` (`/v1/…`) after baseUrl's own path, with `query`'s defined values as its search params. */
  url(path: string, query?: Record<string, unknown>): string {
    const base = new URL(this.options.baseUrl);
    const prefix = base.pathname.replace(/\/+$/, "");
    const u = new URL(`${prefix}${path.startsWith("/") ? "" : "/"}${path}`, base.origin);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  private authHeaders(): Record<string, string> {
    return this.options.key ? { authorization: `Bearer ${this.options.key}` } : {};
  }

  /** One operation, named as in the document: `client.request("POST /v1/conversations", { body })`. */
  async request<R extends Route>(route: R, ...[opts]: Args<R>): Promise<ApiResponse<Routes[R]["response"]>> {
    const o = (opts ?? {}) as {
      path?: Record<string, string>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    };
    const [method, template] = route.split(" ") as [string, string];
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(o.path?.[name] ?? ""));
    const raw =
      o.body === undefined ||
      typeof o.body === "string" ||
      o.body instanceof Uint8Array ||
      o.body instanceof ArrayBuffer ||
      o.body instanceof Blob ||
      o.body instanceof ReadableStream;
    const headers = mergedHeaders(raw ? {} : { "content-type": "application/json" }, o.headers);
    return this.send(method, this.url(path, o.query), {
      body: raw ? (o.body as BodyInit | undefined) : JSON.stringify(o.body),
      headers,
      signal: o.signal,
    });
  }

  /**
   * Any request, typed loosely: for bodies and paths the document does not allow (tests of refusals).
   * `init.headers` are sent over the client's key header, replacing it whatever their case.
   */
  async send<T = unknown>(
    method: string,
    url: string,
    init: { body?: BodyInit; headers?: Record<string, string> | Headers; signal?: AbortSignal } = {},
  ): Promise<ApiResponse<T>> {
    const res = await (this.options.fetch ?? fetch)(url.startsWith("http") ? url : this.url(url), {
      method,
      headers: mergedHeaders(this.authHeaders(), init.headers),
      body: init.body,
      ...(init.signal ? { signal: init.signal } : {}),
      ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit);
    // Read once as bytes: a binary body decoded as text would be mangled beyond recovery.
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    const data = parse(text);
    // The body as the caller expects it: the route's answer when ok (the document's shape), an ErrorBody otherwise.
    return {
      status: res.status,
      ok: res.ok,
      data: data as T,
      error: res.ok ? null : errorOf(data),
      headers: res.headers,
      text,
      bytes,
    };
  }

  /**
   * Sends a turn and yields its events as they stream (SSE); throws ApiError when refused. A turn
   * that calls a client tool ends with a `requires_action` event (and stop_reason
   * "requires_action"): answer it with toolResults(). A stream that ends before the turn's
   * `turn_end` (or `requires_action`, or an `error` before `turn_start` or `turn_queued`) throws ApiError 502 with
   * `{error: {type: "turn_interrupted"}}` after the events it did bring: whether the server ended it
   * or the connection dropped (the read's error is then the ApiError's `cause`; a drop after the
   * `turn_end` ends the iteration quietly). So does a stream the server cut off itself, with an
   * `error` of type `turn_interrupted` and a `turn_end` with stop_reason "error" (its conversation
   * restarted, or the reader fell too far behind): thrown after those two events. A replay of a
   * turn that was interrupted (`turn_start` with `replayed: true`) is its outcome, yielded, not thrown.
   *
   * Leaving the iteration (a `break`, the stream's `return()`) ends it at once and cancels the
   * HTTP body, even while no event comes (keepalives are not yielded); `opts.signal` aborts the
   * request and the stream, which then throws the signal's reason.
   *
   * The request always carries an Idempotency-Key: `opts.idempotencyKey`, or one made for the call
   * (the returned stream's `idempotencyKey`, also on every ApiError it throws). Sending the same
   * body again with that key answers the first attempt's outcome (409 idempotency_in_progress
   * while it still runs) and never runs a second turn.
   */
  turn(
    conversationId: string,
    body: Routes["POST /v1/conversations/{id}/messages"]["body"],
    opts: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): TurnStream {
    return this.streamed(`/v1/conversations/${encodeURIComponent(conversationId)}/messages`, body, {
      idempotencyKey: opts.idempotencyKey || newIdempotencyKey(),
      signal: opts.signal,
    });
  }

  /**
   * Posts the results of a paused turn's client tool calls (every pending id at once) and yields
   * the resumed turn's events (a cut stream throws, leaving and `signal` stop, as in turn()). Keyed as turn() is: a retry of a
   * post that went through, with the same key and results, answers its outcome, not 409
   * tool_results_conflict.
   */
  toolResults(
    conversationId: string,
    results: Routes["POST /v1/conversations/{id}/tool-results"]["body"]["results"],
    opts: { idempotencyKey?: string; signal?: AbortSignal } = {},
  ): TurnStream {
    return this.streamed(
      `/v1/conversations/${encodeURIComponent(conversationId)}/tool-results`,
      { results },
      { idempotencyKey: opts.idempotencyKey || newIdempotencyKey(), signal: opts.signal },
    );
  }

  private streamed(path: string, body: unknown, opts: { idempotencyKey: string; signal?: AbortSignal }): TurnStream {
    // A generator's return() waits for a next() in progress (a read waiting for an event that may
    // not come for minutes): leaving aborts `left` first, which cancels that read at once.
    const left = new AbortController();
    const events = this.keyedEvents(path, body, { ...opts, left: left.signal });
    const leave = events.return.bind(events);
    const stop: typeof events.return = (value) => {
      left.abort();
      return leave(value);
    };
    return Object.assign(events, { idempotencyKey: opts.idempotencyKey, return: stop });
  }

  /** The events of one keyed turn request; every ApiError thrown names the key. */
  private async *keyedEvents(path: string, body: unknown, opts: StreamOptions): AsyncGenerator<TurnEvent> {
    try {
      yield* this.events(path, body, opts);
    } catch (error) {
      if (error instanceof ApiError) error.idempotencyKey = opts.idempotencyKey;
      throw error;
    }
  }

  private async *events(path: string, body: unknown, opts: StreamOptions): AsyncGenerator<TurnEvent> {
    const signal = opts.signal ? AbortSignal.any([opts.signal, opts.left]) : opts.left;
    // Stopped by the caller: a left iteration ends quietly, an aborted signal throws its reason.
    const stopped = () => {
      if (opts.signal?.aborted) throw opts.signal.reason;
      return opts.left.aborted;
    };
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(this.url(path), {
        method: "POST",
        headers: {
          ...this.authHeaders(),
          "content-type": "application/json",
          accept: "text/event-stream",
          "idempotency-key": opts.idempotencyKey,
        },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (stopped()) return;
      throw error;
    }
    if (!res.ok || !res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream"))
      throw new ApiError(res.status, parse(await res.text()), res.headers);
    let started = false;
    let replayed = false;
    let settled = false;
    let lastError: { type: string; message: string; status?: number } | null = null;
    // The server's own word that it cut this stream off (not in a replayed outcome): thrown at the end.
    let cutOff: ErrorBody["error"] | null = null;
    const data = sseData(res.body, { signal });
    try {
      for (;;) {
        let next: IteratorResult<unknown>;
        try {
          next = await data.next();
        } catch (error) {
          // The body's read failed (the connection dropped, or the request was aborted).
          if (stopped()) return;
          if (cutOff) throw interrupted({ error: cutOff }, error);
          if (settled) return;
          throw interrupted(TURN_INTERRUPTED, error);
        }
        if (next.done) break;
        const event = next.value as TurnEvent;
        // Queued is started too: from `turn_queued` on, the turn runs and ends with a `turn_end`.
        if (event.type === "turn_start" || event.type === "turn_queued") started = true;
        if (event.type === "turn_start" && event.replayed) replayed = true;
        if (event.type === "turn_end" || event.type === "requires_action" || (event.type === "error" && !started))
          settled = true;
        lastError = event.type === "error" ? event.error : null;
        if (started && !replayed && lastError?.type === "turn_interrupted") cutOff = lastError;
        yield event;
      }
    } finally {
      await data.return(undefined);
    }
    if (stopped()) return;
    if (cutOff) throw interrupted({ error: cutOff });
    if (settled) return;
    // The server ended the stream on an error of its own (the request's key revoked): that error.
    if (lastError?.type === "authentication_error") throw new ApiError(401, { error: lastError });
    // The stream ended before the turn did (the connection dropped): told, never a quiet end.
    throw interrupted(TURN_INTERRUPTED);
  }

  /** Every message after `after` (a seq), following the `next` cursor page by page. */
  async *messages(conversationId: string, opts: { after?: number; pageSize?: number } = {}): AsyncGenerator<Message> {
    let cursor: number | string | null = opts.after ?? 0;
    while (cursor !== null) {
      const r: ApiResponse<Routes["GET /v1/conversations/{id}/messages"]["response"]> = await this.request(
        "GET /v1/conversations/{id}/messages",
        { path: { id: conversationId }, query: { cursor, limit: opts.pageSize ?? 200 } },
      );
      if (!r.ok) throw new ApiError(r.status, r.data, r.headers);
      yield* r.data.data;
      cursor = r.data.next;
    }
  }

  /**
   * The conversation's websocket. `after`: resume from that seq (the socket keeps the cursor and
   * resume() reconnects from it); without it the socket starts from the conversation's current
   * lastSeq (GET /v1/conversations/:id), so a message saved while it connects still arrives (no
   * `resumed` frame is shown for that first connection); with a key, a refused lookup (an unknown
   * conversation, a bad key) throws its ApiError. A resume that leaves messages out (`more: true`) pages
   * them with messages(). With socketAuth "ticket" each connection asks for a new ticket.
   */
  socket(conversationId: string, opts: { after?: number; ticket?: string } = {}): Promise<ConversationSocket> {
    const base = this.url(`/v1/conversations/${encodeURIComponent(conversationId)}/ws`).replace(/^http/, "ws");
    let given = opts.ticket;
    const useTicket = given !== undefined || this.options.socketAuth === "ticket";
    return ConversationSocket.open(
      {
        url: async () => {
          if (!useTicket) return base;
          let ticket = given;
          given = undefined;
          if (ticket === undefined) {
            const r = await this.request("POST /v1/conversations/{id}/ws-ticket", { path: { id: conversationId } });
            if (!r.ok) throw new ApiError(r.status, r.data, r.headers);
            ticket = String(r.data.ticket);
          }
          return `${base}?ticket=${encodeURIComponent(ticket)}`;
        },
        // Node's WebSocket (undici) takes headers through this non-standard option.
        init: useTicket || !this.options.key ? undefined : { headers: this.authHeaders() },
        ...(this.options.webSocket
          ? { open: this.options.webSocket as (url: string, init: unknown) => Promise<WebSocket> }
          : {}),
        lastSeq: async () => {
          const r = await this.request("GET /v1/conversations/{id}", { path: { id: conversationId } });
          if (r.ok) return r.data.lastSeq;
          // A client without a key (a ticket given to it) cannot look: it connects without a cursor.
          // With a key the refusal is the server's answer, as the socket's own refusal would be
          // (a WebSocket's error tells nothing of why).
          if (!this.options.key) return undefined;
          throw new ApiError(r.status, r.data, r.headers);
        },
        messagesAfter: (after) => this.messages(conversationId, { after }),
      },
      opts.after,
    );
  }
}

export const createClient = (options: ClientOptions) => new Client(options);
