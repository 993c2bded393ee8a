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
    headers?: Record<string, string>;
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
  text: string;
}

export interface ClientOptions {
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

export class Client {
  constructor(readonly options: ClientOptions) {}

  /** The same client with another key (another tenant, or the admin token). */
  as(key: string): Client {
    return new Client({ ...this.options, key });
  }

  url(path: string, query?: Record<string, unknown>): string {
    const u = new URL(path, this.options.baseUrl);
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
    const headers = { ...(raw ? {} : { "content-type": "application/json" }), ...o.headers };
    return this.send(method, this.url(path, o.query), {
      body: raw ? (o.body as BodyInit | undefined) : JSON.stringify(o.body),
      headers,
    });
  }

  /** Any request, typed loosely: for bodies and paths the document does not allow (tests of refusals). */
  async send<T = unknown>(
    method: string,
    url: string,
    init: { body?: BodyInit; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const res = await (this.options.fetch ?? fetch)(url.startsWith("http") ? url : this.url(url), {
      method,
      headers: { ...this.authHeaders(), ...init.headers },
      body: init.body,
      ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit);
    const text = await res.text();
    const data = parse(text);
    // The body as the caller expects it: the route's answer when ok (the document's shape), an ErrorBody otherwise.
    return {
      status: res.status,
      ok: res.ok,
      data: data as T,
      error: res.ok ? null : errorOf(data),
      headers: res.headers,
      text,
    };
  }

  /**
   * Sends a turn and yields its events as they stream (SSE); throws ApiError when refused. A turn
   * that calls a client tool ends with a `requires_action` event (and stop_reason
   * "requires_action"): answer it with toolResults(). A stream that ends before the turn's
   * `turn_end` (or `requires_action`, or an `error` before `turn_start` or `turn_queued`) throws ApiError 502 with
   * `{error: {type: "turn_interrupted"}}` after the events it did bring.
   *
   * The request always carries an Idempotency-Key: `opts.idempotencyKey`, or one made for the call
   * (the returned stream's `idempotencyKey`, also on every ApiError it throws). Sending the same
   * body again with that key answers the first attempt's outcome (409 idempotency_in_progress
   * while it still runs) and never runs a second turn.
   */
  turn(
    conversationId: string,
    body: Routes["POST /v1/conversations/{id}/messages"]["body"],
    opts: { idempotencyKey?: string } = {},
  ): TurnStream {
    return this.streamed(
      `/v1/conversations/${encodeURIComponent(conversationId)}/messages`,
      body,
      opts.idempotencyKey || newIdempotencyKey(),
    );
  }

  /**
   * Posts the results of a paused turn's client tool calls (every pending id at once) and yields
   * the resumed turn's events (a cut stream throws as in turn()). Keyed as turn() is: a retry of a
   * post that went through, with the same key and results, answers its outcome, not 409
   * tool_results_conflict.
   */
  toolResults(
    conversationId: string,
    results: Routes["POST /v1/conversations/{id}/tool-results"]["body"]["results"],
    opts: { idempotencyKey?: string } = {},
  ): TurnStream {
    return this.streamed(
      `/v1/conversations/${encodeURIComponent(conversationId)}/tool-results`,
      { results },
      opts.idempotencyKey || newIdempotencyKey(),
    );
  }

  private streamed(path: string, body: unknown, idempotencyKey: string): TurnStream {
    const events = this.keyedEvents(path, body, idempotencyKey);
    return Object.assign(events, { idempotencyKey });
  }

  /** The events of one keyed turn request; every ApiError thrown names the key. */
  private async *keyedEvents(path: string, body: unknown, idempotencyKey: string): AsyncGenerator<TurnEvent> {
    try {
      yield* this.events(path, body, idempotencyKey);
    } catch (error) {
      if (error instanceof ApiError) error.idempotencyKey = idempotencyKey;
      throw error;
    }
  }

  private async *events(path: string, body: unknown, idempotencyKey: string): AsyncGenerator<TurnEvent> {
    const res = await (this.options.fetch ?? fetch)(this.url(path), {
      method: "POST",
      headers: {
        ...this.authHeaders(),
        "content-type": "application/json",
        accept: "text/event-stream",
        "idempotency-key": idempotencyKey,
      },
      body: JSON.stringify(body),
    });
    if (!res.ok || !res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream"))
      throw new ApiError(res.status, parse(await res.text()), res.headers);
    let started = false;
    let settled = false;
    let lastError: { type: string; message: string; status?: number } | null = null;
    for await (const data of sseData(res.body)) {
      const event = data as TurnEvent;
      // Queued is started too: from `turn_queued` on, the turn runs and ends with a `turn_end`.
      if (event.type === "turn_start" || event.type === "turn_queued") started = true;
      if (event.type === "turn_end" || event.type === "requires_action" || (event.type === "error" && !started))
        settled = true;
      lastError = event.type === "error" ? event.error : null;
      yield event;
    }
    if (settled) return;
    // The server ended the stream on an error of its own (the request's key revoked): that error.
    if (lastError?.type === "authentication_error") throw new ApiError(401, { error: lastError });
    // The stream ended before the turn did (the connection dropped): told, never a quiet end.
    throw new ApiError(502, TURN_INTERRUPTED);
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
   * `resumed` frame is shown for that first connection). A resume that leaves messages out (`more: true`) pages
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
          if (!r.ok) throw new ApiError(r.status, r.data, r.headers);
          return r.data.lastSeq;
        },
        messagesAfter: (after) => this.messages(conversationId, { after }),
      },
      opts.after,
    );
  }
}

export const createClient = (options: ClientOptions) => new Client(options);
