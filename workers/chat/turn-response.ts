// A turn's events from the Durable Object (decoded by core/events.ts), answered as SSE or as one JSON body.
import type { TurnEvent } from "../../core/events";
import { toSse } from "../../core/events";
import { type StoredMessage, type Usage, zeroUsage } from "../../core/types";
import { errorBody, turnErrorStatus } from "./errors";

/**
 * A turn whose events stop before its `turn_end` (the conversation's object died mid-turn, or
 * threw past every guard): told as an error, never as a turn that ended well, a turn still queued
 * behind others (`turn_queued` named it) included. A refusal before the turn started (an `error`
 * and neither `turn_start` nor `turn_queued`) has no `turn_end` to wait for.
 */
export const TURN_CUT_OFF = {
  type: "turn_interrupted",
  message:
    "the turn stopped before it finished (the conversation's object restarted); what it saved is in messages: read the transcript, or send it again with the same Idempotency-Key to learn its outcome",
} as const;

/** SSE comment lines while a turn is quiet (queued, a long tool step): idle proxies keep the stream. */
const KEEPALIVE_MS = 15_000;

/** How often a running SSE turn looks its key up again (through the auth cache), as sockets do. */
export const SSE_KEY_RECHECK_MS = 5_000;
/** What a stream whose key was revoked mid-turn is told last (the turn itself runs on). */
const SSE_KEY_GONE = { type: "authentication_error", message: "the API key of this request is revoked or expired" };

export interface SseOptions {
  /**
   * Whether the request's key is still active: asked every SSE_KEY_RECHECK_MS while the turn
   * streams; false ends the stream with an `authentication_error`, so a revoked key hears no more
   * of the conversation. A lookup that fails counts as active (the next one decides).
   */
  keyActive?: () => Promise<boolean>;
}

export function sseResponse(events: ReadableStream<TurnEvent>, { keyActive }: SseOptions = {}): Response {
  const encoder = new TextEncoder();
  let revoked = false;
  let recheck: ReturnType<typeof setInterval> | undefined;
  // The turn's id once it started or was queued (`turn_queued` names it): from then on it ends with a `turn_end`.
  let started: string | null = null;
  let settled = false;
  // The object cut this stream off (`turn_interrupted`): told once, by the object.
  let cutOff = false;
  let keepalive: ReturnType<typeof setInterval> | undefined;
  // Closed, or cancelled by the client that left: nothing more is sent.
  let over = false;
  const stop = () => {
    over = true;
    clearInterval(keepalive);
    clearInterval(recheck);
  };
  // Read by hand, so a client that leaves cancels the turn's event stream at once.
  const reader = events.getReader();
  /** The stream's last words (a turn cut short, or a revoked key, is told so), then its end. */
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (over) return;
    stop();
    const send = (event: TurnEvent) => controller.enqueue(encoder.encode(toSse(event)));
    if (revoked && !settled)
      send({ type: "error", ...(started ? { turnId: started } : {}), error: { ...SSE_KEY_GONE } });
    else if (!settled && started) {
      if (!cutOff) send({ type: "error", turnId: started, error: { ...TURN_CUT_OFF } });
      send({
        type: "turn_end",
        turnId: started,
        stop_reason: "error",
        usage: zeroUsage(),
        timing: { serverMs: 0, modelMs: 0, queuedMs: 0 },
      });
    }
    controller.close();
  };
  // Pulled: one event from the object per read of the client, so a slow client holds the turn's
  // events back in the object (turn-intake.ts bounds them there), never here.
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Only while nothing waits unread: a client still to read what came has data, not silence.
        keepalive = setInterval(() => {
          if (!over && (controller.desiredSize ?? 0) >= 0) controller.enqueue(encoder.encode(": keepalive\n\n"));
        }, KEEPALIVE_MS);
        if (keyActive)
          recheck = setInterval(async () => {
            if (revoked || (await keyActive().catch(() => true))) return;
            revoked = true;
            // Ends the stream; the turn goes on in its conversation without this listener.
            await reader.cancel("the request's key was revoked").catch(() => {});
            finish(controller);
          }, SSE_KEY_RECHECK_MS);
      },
      async pull(controller) {
        let next: ReadableStreamReadResult<TurnEvent>;
        try {
          next = await reader.read();
        } catch {
          // The stream from the object broke: told by finish, as a stream that ended early.
          next = { done: true, value: undefined };
        }
        if (over) return;
        if (next.done || revoked) return finish(controller);
        const event = next.value;
        if (event.type === "turn_start" || event.type === "turn_queued") started = event.turnId;
        if (event.type === "turn_end" || (event.type === "error" && !started)) settled = true;
        if (event.type === "error" && event.error.type === TURN_CUT_OFF.type) cutOff = true;
        controller.enqueue(encoder.encode(toSse(event)));
      },
      cancel(reason) {
        stop();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

export interface TurnSummary {
  messages: StoredMessage[];
  stop_reason: string;
  usage: Usage | null;
  turnId: string | null;
  /**
   * Why the turn ended in an error. A model failure (agent/model-errors.ts) also names the
   * provider's error type and request id: support asks for them, so the answer keeps them; an
   * overflow also its figures (`overflow`).
   */
  error: Extract<TurnEvent, { type: "error" }>["error"] | null;
  timing: { serverMs: number; modelMs: number; queuedMs: number } | null;
  /** The client tool calls a paused turn waits on. */
  requiresAction: Omit<Extract<TurnEvent, { type: "requires_action" }>, "type"> | null;
  /** The model declined (stop_reason "refusal"), with its category and explanation. */
  refusal: Omit<Extract<TurnEvent, { type: "refusal" }>, "type" | "turnId"> | null;
  /** The turn ran on another model than the settings named (a retired model's replacement, a refusal's fallback). */
  modelChanges: Omit<Extract<TurnEvent, { type: "model_changed" }>, "type" | "turnId">[];
  /** A regenerate: the messages of the exchange it replaced (still in the transcript, marked). */
  superseded: Omit<Extract<TurnEvent, { type: "exchange_superseded" }>, "type" | "turnId" | "agent"> | null;
  /** Where the turn's own D1 writes reached (its `turn_end`'s `d1Bookmark`): the answer's bookmark covers it. */
  d1Bookmark: string | null;
}

export async function collectTurn(events: ReadableStream<TurnEvent>): Promise<TurnSummary> {
  const out: TurnSummary = {
    messages: [],
    stop_reason: "error",
    usage: null,
    turnId: null,
    error: null,
    timing: null,
    requiresAction: null,
    refusal: null,
    modelChanges: [],
    superseded: null,
    d1Bookmark: null,
  };
  let ended = false;
  try {
    for await (const event of events) ended = take(out, event) || ended;
  } catch {
    // The stream from the object broke mid-turn: told below.
  }
  if (!ended && !out.error) out.error = { ...TURN_CUT_OFF };
  return out;
}

/** One event into the summary; true for the turn's end. */
function take(out: TurnSummary, event: TurnEvent): boolean {
  // A turn queued behind others is named by `turn_queued` (the same id its turn_start carries).
  if (event.type === "turn_start" || event.type === "turn_queued") out.turnId = event.turnId;
  else if (event.type === "message") out.messages.push(event.message);
  else if (event.type === "error") out.error = event.error;
  else if (event.type === "requires_action")
    out.requiresAction = { turnId: event.turnId, calls: event.calls, expiresAt: event.expiresAt };
  else if (event.type === "refusal" && !event.agent)
    out.refusal = {
      model: event.model,
      category: event.category,
      explanation: event.explanation,
      ...(event.fallbackModel ? { fallbackModel: event.fallbackModel } : {}),
    };
  else if (event.type === "model_changed" && !event.agent)
    out.modelChanges.push({
      from: event.from,
      to: event.to,
      reason: event.reason,
      ...(event.retiredOn ? { retiredOn: event.retiredOn } : {}),
    });
  else if (event.type === "exchange_superseded")
    out.superseded = {
      fromSeq: event.fromSeq,
      toSeq: event.toSeq,
      messageIds: event.messageIds,
      supersededBy: event.supersededBy,
    };
  else if (event.type === "turn_end") {
    out.stop_reason = event.stop_reason;
    out.usage = event.usage;
    out.timing = event.timing;
    out.d1Bookmark = event.d1Bookmark ?? null;
    return true;
  }
  return false;
}

/** 200 with the turn, or 502 naming the model failure (what was saved is still returned); 503 when no model is configured. */
export function turnJson(conversationId: string, turn: TurnSummary, requestMs: number): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "x-conversation-id": conversationId };
  if (turn.timing) {
    const model = turn.timing.modelMs;
    headers["server-timing"] =
      `app;dur=${Math.max(0, requestMs - model - turn.timing.queuedMs)}, model;dur=${model}, queue;dur=${turn.timing.queuedMs}`;
  }
  const body = {
    conversationId,
    turnId: turn.turnId,
    messages: turn.messages,
    stop_reason: turn.stop_reason,
    usage: turn.usage,
    ...(turn.requiresAction ? { requires_action: turn.requiresAction } : {}),
    ...(turn.refusal ? { refusal: turn.refusal } : {}),
    ...(turn.modelChanges.length ? { model_changes: turn.modelChanges } : {}),
    ...(turn.superseded ? { superseded: turn.superseded } : {}),
  };
  if (!turn.error) return new Response(JSON.stringify(body), { status: 200, headers });
  const status = turnErrorStatus(turn.error);
  const err = errorBody(status, turn.error.message, turn.error.type);
  // The provider's own facts, when the failure came from it: what the SSE `error` event and the
  // idempotency ledger carry too, so a fresh answer and a replayed one say the same.
  const { status: upstream, providerType, requestId, overflow } = turn.error;
  const error = {
    ...err.error,
    ...(upstream ? { status: upstream } : {}),
    ...(providerType ? { providerType } : {}),
    ...(requestId ? { requestId } : {}),
    ...(overflow ? { overflow: { promptTokens: overflow.promptTokens, maxTokens: overflow.maxTokens } } : {}),
  };
  return new Response(JSON.stringify({ ...body, error }), { status, headers });
}
