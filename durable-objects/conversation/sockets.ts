// The conversation's websockets: the upgrade, a reconnecting client's catch-up, admitting frames
// (every one checked against the key that opened the socket and its rate limit; `send` frames as
// turns: model, idempotency), and broadcasting every turn event to the sockets whose key still works.
import type { TurnEvent } from "../../core/events";
import { sortableId } from "../../core/ids";
import { modelProblem, MODEL_NOT_CONFIGURED } from "../../core/model-provider";
import { unknownAttachmentMessage, withAttachments } from "../../services/attachments/turn-notes";
import { toToolResultBlock, type ClientToolResult } from "../../core/client-tools";
import { keyForHash } from "../../services/keys/auth";
import { rateLimitedError, refundTurn, takeRateLimit, whenUnstarted } from "../rate-limiter-client";
import type { RateDecision } from "../rate-limiter-do";
import type { ObjectScope } from "./object-scope";
import { pausedMessage, pendingView, type PausedTurn, type PausedTurns } from "./paused-turn";
import type { ConversationRecord } from "./record";
import { ADMIT_BEFORE_READING, type ClientFrame, parseClientFrame } from "./socket-frames";
import type { TurnInput, TurnIntake } from "./turn-intake";
import { savedSince, LiveTurn } from "./live-turn";
import type { TurnOrder } from "./turn-order";
import { ADMISSION_FAILED, KEY_GONE } from "./frame-errors";
import { TURN_PAUSED } from "./turn-runner";

/** During a turn, how often each socket key is looked up again (through the auth cache) as events go out. */
const KEY_RECHECK_MS = 5_000;
/**
 * A frame to one socket. A socket that closed meanwhile (its client left while a frame was being
 * admitted) throws on send: what it would have been told is dropped, and the admission goes on.
 */
function tell(ws: WebSocket, frame: object | string): void {
  try {
    ws.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  } catch {
    // the socket went away
  }
}

interface SocketAttachment {
  tenantId: string;
  conversationId: string;
  /** The hashed API key that opened the socket: its frames count against that key's limits, and the socket lives only as long as the key. */
  rateKey?: string;
}

export interface SocketParts {
  record: ConversationRecord;
  paused: PausedTurns;
  intake: TurnIntake;
  order: TurnOrder;
}

/** A socket-only frame about the conversation: `title_changed` (`source` auto: the model titled it; user: a rename). */
export type ConversationNotice = { type: "title_changed"; title: string; source: "auto" | "user" };

type Refuse = (error: { type: string; message: string; retryAfterSeconds?: number; status?: number }) => void;

/** A frame's socket, and whether the frame (a large one) was admitted before it was read, in the frame order. */
type Admitting = { ref: SocketAttachment; early: boolean };

/** A `send` frame being admitted: the turnId it would have, and how its refusal reaches the sender. */
interface SendAdmission extends Admitting {
  frame: Extract<ClientFrame, { type: "send" }>;
  turnId: string;
  refuse: (error: Parameters<Refuse>[0], extra?: Record<string, unknown>) => void;
}

/**
 * A socket is worth no more than the key that opened it. Each socket's attachment keeps that key's
 * digest, and the object looks the key up (through the auth cache, services/keys/auth.ts) on every
 * frame, before each turn's first event and, while a turn runs, every KEY_RECHECK_MS: a socket
 * whose key is revoked or expired gets an `authentication_error` frame and is closed with 1008
 * before a later event reaches it. Revoking needs no list of the objects a key has sockets on (a
 * fan-out to every conversation of the tenant would wake them all); the bound is the auth cache's,
 * the same as for the key's HTTP requests, and an idle socket hears nothing to begin with.
 */
export class ConversationSockets {
  /** Per socket, the last seq its resume catch-up sent: live `message` frames never repeat one. */
  private readonly caughtUp = new WeakMap<WebSocket, number>();
  /** The running turn's unsaved part, for a resuming socket (live-turn.ts). */
  private readonly live = new LiveTurn();
  /**
   * `send` frames between their arrival and their turn's queueing (the admission awaits the key,
   * the rate limiter, D1): a resuming socket counts them as in flight, so a client never sends
   * again a message whose turn is about to start. A large frame counts from its arrival, unread:
   * it may be a `send`, and counting one that is not errs toward "don't send it again".
   */
  private admitting = 0;
  private readonly attachments = new WeakMap<WebSocket, SocketAttachment>();
  /** Key digests found inactive (a revoked or expired key never comes back). */
  private readonly deadKeys = new Set<string>();
  /** Per key digest, when it was last looked up: broadcasts look again once this is KEY_RECHECK_MS old. */
  private readonly keyLookedUp = new Map<string, number>();
  /** Key digests being looked up again for a broadcast: their sockets' frames wait in `held` meanwhile. */
  private readonly rechecking = new Set<string>();
  /** Per socket, the frames held (in order) until its key's look-up answers: sent then, or dropped with the socket. */
  private readonly held = new WeakMap<WebSocket, string[]>();

  constructor(
    private readonly scope: ObjectScope,
    private readonly parts: SocketParts,
  ) {}

  /** Only websocket upgrades arrive here, already authenticated by the chat worker. */
  async upgrade(request: Request): Promise<Response> {
    const tenantId = request.headers.get("x-tenant-id") ?? "";
    const conversationId = request.headers.get("x-conversation-id") ?? "";
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket")
      return new Response("expected a websocket upgrade", { status: 426 });
    if (!(await this.parts.record.load({ tenantId, conversationId })))
      return new Response("not found", { status: 404 });
    const after = new URL(request.url).searchParams.get("after");
    const resuming = after !== null && /^\d{1,15}$/.test(after);
    // Read before the accept: from the accept to the catch-up's end nothing may await, so no live
    // event reaches the socket before (or inside) its catch-up.
    const waiting = resuming ? await this.parts.paused.get() : null;
    // A delete that landed during that read closed the sockets it found, not this one: none is opened.
    if (this.scope.deletion.deleted) return new Response("not found", { status: 404 });
    const pair = new WebSocketPair();
    const server = pair[1];
    this.scope.ctx.acceptWebSocket(server);
    const rateKey = request.headers.get("x-rate-key") ?? undefined;
    server.serializeAttachment({
      tenantId,
      conversationId,
      ...(rateKey ? { rateKey } : {}),
    } satisfies SocketAttachment);
    if (resuming) this.resume(server, { after: Number(after), waiting: waiting && !waiting.answers ? waiting : null });
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  /**
   * A reconnecting client's catch-up (`/ws?after=<last seq it saw>`): every saved message after
   * that seq as a `message` frame, an `exchange_superseded` for each regenerate it missed, the
   * running turn's unsaved part and each queued turn's `turn_queued` (live-turn.ts), then `resumed`.
   * It runs synchronously right after the accept, so no turn event interleaves, and live `message`
   * frames skip what the catch-up already sent: each message reaches the socket exactly once, in seq order.
   */
  private resume(ws: WebSocket, { after, waiting }: { after: number; waiting: PausedTurn | null }): void {
    const { store } = this.scope;
    const { frames, through, more } = savedSince(store, { head: this.parts.record.head, after });
    for (const frame of frames) ws.send(JSON.stringify(frame));
    this.caughtUp.set(ws, through);
    // The running turn (its start, what it streamed since its last saved message) or the calls a
    // paused turn waits on, then each turn still queued, by the id a stop names (live-turn.ts).
    const paused: TurnEvent | null = waiting ? { type: "requires_action", ...pendingView(waiting) } : null;
    const inFlight = this.parts.order.turnsInFlight;
    for (const event of this.live.catchUp({ inFlight, paused })) ws.send(JSON.stringify(event));
    ws.send(
      JSON.stringify({
        type: "resumed",
        after,
        through,
        lastSeq: store.lastSeq(),
        more,
        turnsInFlight: this.parts.order.turnsInFlight + this.admitting,
      }),
    );
  }

  async message(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    const ref = this.attachmentOf(ws);
    if (typeof data !== "string" || data.length <= ADMIT_BEFORE_READING)
      return this.handle(ws, { ref, early: false }, parseClientFrame(data));
    // A large frame: admitted before it is read, in the frame order (a send among them keeps its
    // place), so it is refused unread (`turnId: null`, no `ref`) when its key is gone or over its limit.
    const refuse: Refuse = (error) => tell(ws, { type: "error", turnId: null, error });
    this.admitting++;
    await this.answered(refuse, () =>
      this.parts.order.admit(async () => {
        if (await this.admitFrame(ws, { ref, turn: false, refuse }))
          await this.handle(ws, { ref, early: true }, parseClientFrame(data));
      }),
    ).finally(() => this.admitting--);
  }

  /** A frame that was read: answered, or admitted and run. */
  private async handle(ws: WebSocket, at: Admitting, frame: ReturnType<typeof parseClientFrame>): Promise<void> {
    const { ref, early } = at;
    if (!frame.ok || frame.value.type === "ping") {
      // Frames that start nothing still come from the key: checked and counted like any request. A
      // refused frame that could be read echoes its `ref`: a `send` refused here (too long, too many
      // attachments) has no turnId, and its sender still learns that this error answers it.
      const named = !frame.ok && frame.ref !== undefined ? { ref: frame.ref } : {};
      const refuse: Refuse = (error) => tell(ws, { type: "error", turnId: null, ...named, error });
      return this.answered(refuse, async () => {
        if (!(await this.admitFrame(ws, { ref, turn: false, refuse, early }))) return;
        if (!frame.ok) refuse({ type: "invalid_request", status: 400, message: frame.error });
        else tell(ws, { type: "pong" });
      });
    }
    if (frame.value.type === "tool_results") return this.toolResults(ws, at, frame.value.results);
    if (frame.value.type === "stop") return this.stop(ws, at, frame.value.turnId);
    // A send frame is a turn from here on: a refusal names the turnId it would have had.
    const turnId = sortableId("turn");
    const named = frame.value.ref !== undefined ? { ref: frame.value.ref } : {};
    const refuse = (error: Parameters<Refuse>[0], extra: Record<string, unknown> = {}) =>
      tell(ws, { type: "error", turnId, ...named, ...extra, error });
    const send = frame.value;
    const counted = early ? 0 : 1; // a large frame (`early`) is counted since it arrived (message)
    this.admitting += counted;
    await this.answered(refuse, () => this.admitSend(ws, { ref, early, frame: send, turnId, refuse })).finally(
      () => (this.admitting -= counted),
    );
  }

  /**
   * Runs a frame's admission: one that throws (the rate limiter, D1, storage) is answered to its
   * sender with an ADMISSION_FAILED `error` frame, never dropped without a word.
   */
  private async answered(refuse: Refuse, admission: () => Promise<unknown>): Promise<void> {
    try {
      await admission();
    } catch (err) {
      console.error("a websocket frame's admission failed", err);
      refuse({ ...ADMISSION_FAILED });
    }
  }

  /** A frame's admission in the frame order: at once for a frame admitted early, already in it. */
  private inOrder(early: boolean, admission: () => Promise<unknown>): Promise<unknown> {
    return early ? admission() : this.parts.order.admit(admission);
  }

  private async admitSend(ws: WebSocket, { ref, early, frame, turnId, refuse }: SendAdmission): Promise<void> {
    const { content, attachments, idempotencyKey, tools, regenerate } = frame;
    const { record, intake, paused } = this.parts;
    await this.inOrder(early, async () => {
      const found = await record.load(ref);
      const problem = modelProblem(this.scope.env);
      // Like a POST of messages: the key is checked first (a revoked key's socket is closed whatever else the frame
      // would be told), every send takes a request token, and one that can run (a conversation, a model) a turn token
      // too, which a refusal after it (`refused`) gives back, the key's and its tenant's, before it is told.
      if (!(await this.admitFrame(ws, { ref, turn: !!found && !problem, refuse, early }))) return;
      if (!found) return refuse({ type: "not_found", status: 404, message: "conversation not found" });
      if (problem) return refuse({ type: MODEL_NOT_CONFIGURED, message: problem, status: 503 });
      const refund = async () => {
        const keyHash = ref.rateKey;
        if (keyHash) await refundTurn(this.scope.env, { keyHash, tenantId: ref.tenantId }).catch(console.error);
      };
      const refused = async (...why: Parameters<SendAdmission["refuse"]>) => (await refund(), refuse(...why));
      const turn = await withAttachments({ db: this.scope.env.DB, tenantId: ref.tenantId, ids: attachments, content });
      if (turn.kind === "unknown")
        return refused({ type: "invalid_request", status: 400, message: unknownAttachmentMessage(turn.id) });
      const input: TurnInput = {
        content: turn.content,
        activate: turn.activate,
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        ...(tools ? { tools } : {}),
        ...(regenerate ? { regenerate } : {}),
      };
      const keyed = await intake.claimKey(input);
      if (keyed.kind !== "new") {
        // Only the asking socket hears about a repeated key; the others saw the turn itself.
        // A key's turn queued or running: the frame names it (a stop can), null until it is queued; not this send.
        const busy = keyed.kind === "refused" && keyed.refusal.status === 409 ? (keyed.turnId ?? null) : turnId;
        if (keyed.kind === "refused") return refused(keyed.refusal, { idempotencyKey, turnId: busy });
        // A named send repeated with its key is told the turn it already is, as a new one would be.
        const original = keyed.events.find((e) => "turnId" in e && typeof e.turnId === "string");
        if (frame.ref !== undefined && original && "turnId" in original)
          tell(ws, { type: "accepted", ref: frame.ref, turnId: original.turnId });
        for (const event of keyed.events) tell(ws, event);
        return;
      }
      // From the claim to the queueing, a failure frees the key again: a retry runs, never a 409 forever.
      let queued = false;
      try {
        // As over HTTP: no new turn while one waits on client tools; only the sender hears it.
        const waiting = await paused.get();
        if (waiting) {
          intake.releaseKey(idempotencyKey);
          return refused({ type: TURN_PAUSED, message: pausedMessage(waiting), status: 409 });
        }
        // A regenerate that cannot be taken now is refused before it queues (the key is free again).
        const cannot = intake.regenerateRefusal(input);
        if (cannot) {
          intake.releaseKey(idempotencyKey);
          return refused({ type: cannot.type, message: cannot.message, status: cannot.status });
        }
        // The sender learns its turnId before any event of the turn (only when it named the send); a
        // sender gone meanwhile hears nothing, and its turn is queued all the same (it can resume).
        if (frame.ref !== undefined) tell(ws, { type: "accepted", ref: frame.ref, turnId });
        queued = true;
        // Events reach this socket (and every other one of the conversation) through broadcast; a
        // turn that stops before its model loop, nothing saved or spent, gives its token back too.
        void intake.enqueue({ ref, input, sink: whenUnstarted(() => this.scope.ctx.waitUntil(refund())), turnId });
      } catch (err) {
        // Once queued, the key is the turn's: its row follows the turn's events.
        if (!queued) intake.releaseKey(idempotencyKey);
        throw err;
      }
    });
  }

  /** Results for the paused turn's client calls, checked like POST /tool-results; the turn's events reach every socket. */
  private async toolResults(ws: WebSocket, { ref, early }: Admitting, results: ClientToolResult[]): Promise<void> {
    const { record, paused, intake } = this.parts;
    const refuse: Refuse = (error) => tell(ws, { type: "error", turnId: null, error });
    const admission = this.inOrder(early, async () => {
      if (!(await record.load(ref)))
        return refuse({ type: "not_found", status: 404, message: "conversation not found" });
      // Like POST /tool-results: a request of the key (the turn it resumes was counted when sent).
      if (!(await this.admitFrame(ws, { ref, turn: false, refuse, early }))) return;
      // As POST /tool-results: with no model the turn cannot go on, so no result is taken (a later post can be).
      const problem = modelProblem(this.scope.env);
      if (problem) return refuse({ type: MODEL_NOT_CONFIGURED, message: problem, status: 503 });
      const accepted = await paused.accept(results, toToolResultBlock);
      if (accepted.kind === "refused") return refuse(accepted.refusal);
      void intake.enqueueResume({ ref, turnId: accepted.turn.turnId, sink: null });
    });
    await this.answered(refuse, () => admission);
  }

  /**
   * The checks every frame passes before it does anything: the key that opened the socket is still
   * active (else the frame is refused and the key's sockets are closed), and it has a token left
   * (a request's; a turn's too for `send`). A socket opened with no key digest is not checked.
   * `early`: the frame passed the key and request checks before it was read; only a turn's token is left.
   */
  private async admitFrame(
    ws: WebSocket,
    frame: { ref: SocketAttachment; turn: boolean; refuse: Refuse; early?: boolean },
  ): Promise<boolean> {
    const { ref, turn, refuse, early = false } = frame;
    if (!ref.rateKey) return true;
    if (!early && !(await this.keyActive(ref.rateKey, ref.tenantId))) {
      refuse(KEY_GONE);
      this.closeSocketsOf(ref.rateKey, ws);
      return false;
    }
    const decision = await this.takeTokens(ref.rateKey, { requests: !early, turn, tenantId: ref.tenantId });
    if (decision.ok) return true;
    refuse(rateLimitedError(decision));
    return false;
  }

  /** The key's tokens: a request's (unless an early admission took it already), a turn's (the key's and its tenant's) for a turn. */
  private async takeTokens(
    keyHash: string,
    take: { requests: boolean; turn: boolean; tenantId: string },
  ): Promise<RateDecision> {
    return takeRateLimit(this.scope.env, { keyHash, ...take });
  }

  /** Whether the key with this digest is still the tenant's active key (seen within the auth cache's bound). */
  private async keyActive(keyHash: string, tenantId: string): Promise<boolean> {
    if (this.deadKeys.has(keyHash)) return false;
    this.keyLookedUp.set(keyHash, Date.now());
    const active = (await keyForHash(this.scope.env, keyHash))?.tenantId === tenantId;
    if (!active) this.deadKeys.add(keyHash);
    return active;
  }

  /**
   * Looks up the key of every open socket and closes those whose key is gone: awaited before a
   * turn's first event (and an attachment note's), so nothing of it reaches them. A lookup that
   * fails leaves its sockets open (the next one decides); it never holds the turn up.
   */
  async closeRevoked(): Promise<void> {
    const keys = new Map<string, string>();
    for (const ws of this.scope.ctx.getWebSockets()) {
      const { rateKey, tenantId } = this.attachmentOf(ws);
      if (rateKey) keys.set(rateKey, tenantId);
    }
    await Promise.all(
      [...keys].map(async ([keyHash, tenantId]) => {
        if (!(await this.keyActive(keyHash, tenantId).catch(() => true))) this.closeSocketsOf(keyHash);
      }),
    );
  }

  /** Every socket of the key: an `authentication_error` frame (unless it was refused one already), then code 1008. */
  private closeSocketsOf(keyHash: string, refused?: WebSocket): void {
    for (const ws of this.scope.ctx.getWebSockets()) {
      if (this.attachmentOf(ws).rateKey !== keyHash) continue;
      try {
        if (ws !== refused) ws.send(JSON.stringify({ type: "error", turnId: null, error: KEY_GONE }));
        ws.close(1008, "key revoked");
      } catch {
        // already closed
      }
    }
  }

  private attachmentOf(ws: WebSocket): SocketAttachment {
    let attachment = this.attachments.get(ws);
    if (!attachment) this.attachments.set(ws, (attachment = ws.deserializeAttachment() as SocketAttachment));
    return attachment;
  }

  /**
   * A `stop` frame: admitted after the frames before it (a stop right after a send finds its turn),
   * answered to this socket with `stopped`; every socket sees the turn end as "interrupted".
   */
  private async stop(ws: WebSocket, { ref, early }: Admitting, turnId?: string): Promise<void> {
    const { record, intake, paused } = this.parts;
    const refuse: Refuse = (error) => tell(ws, { type: "error", turnId: turnId ?? null, error });
    const admission = this.inOrder(early, async () => {
      if (!(await record.load(ref)))
        return refuse({ type: "not_found", status: 404, message: "conversation not found" });
      // Like POST /stop: a request of the key, checked and counted like any other frame.
      if (!(await this.admitFrame(ws, { ref, turn: false, refuse, early }))) return;
      // Not awaited inside the admission: later frames are not held up while the turn settles; a
      // stop that fails there (its paused turn's storage) is answered like a failed admission.
      void intake.stop(ref, { turnId, paused }).then(
        (answer) => tell(ws, { type: "stopped", ...answer }),
        (err) => {
          console.error("a stop frame failed", err);
          refuse({ ...ADMISSION_FAILED });
        },
      );
    });
    await this.answered(refuse, () => admission);
  }

  close(ws: WebSocket, code: number): void {
    try {
      ws.close(code === 1005 ? 1000 : code, "closing");
    } catch {
      // already closed
    }
  }

  /**
   * A change to the conversation itself, outside any turn (its title: the automatic one, or a
   * rename), to every socket. The keys are looked up first, as before a turn's first event, so a
   * socket whose key is gone is closed and hears nothing of it.
   */
  async announce(frame: ConversationNotice): Promise<void> {
    if (!this.scope.ctx.getWebSockets().length) return;
    await this.closeRevoked();
    const text = JSON.stringify(frame);
    for (const ws of this.scope.ctx.getWebSockets()) {
      try {
        ws.send(text);
      } catch {
        // a socket that went away, or one just closed
      }
    }
  }

  /**
   * Every turn event to every socket whose key still works. A socket whose key is due a look-up
   * (KEY_RECHECK_MS after the last; at once for `turn_queued` and `turn_start`, which a stopped
   * queued turn sends with no closeRevoked before) gets nothing until it answers (`recheck`).
   */
  broadcast(event: TurnEvent): void {
    this.live.record(event);
    const sockets = this.scope.ctx.getWebSockets();
    if (!sockets.length) return;
    const frame = JSON.stringify(event);
    const now = Date.now();
    const opening = event.type === "turn_queued" || event.type === "turn_start";
    for (const ws of sockets) {
      const { rateKey, tenantId } = this.attachmentOf(ws);
      if (rateKey && this.deadKeys.has(rateKey)) {
        this.closeSocketsOf(rateKey);
        continue;
      }
      if (event.type === "message" && (this.caughtUp.get(ws) ?? 0) >= event.message.seq) continue;
      const held = this.held.get(ws);
      if (held) {
        held.push(frame);
        continue;
      }
      if (rateKey && (opening || now - (this.keyLookedUp.get(rateKey) ?? 0) >= KEY_RECHECK_MS)) {
        this.held.set(ws, [frame]);
        this.recheck(rateKey, tenantId);
        continue;
      }
      tell(ws, frame);
    }
  }

  /** The key looked up again: its sockets get their held frames, or are closed (1008) when it is gone. */
  private recheck(keyHash: string, tenantId: string): void {
    if (this.rechecking.has(keyHash)) return;
    this.rechecking.add(keyHash);
    const answered = async () => {
      // A look-up that fails leaves the sockets open, as closeRevoked does: the next one decides.
      const active = await this.keyActive(keyHash, tenantId).catch(() => true);
      this.rechecking.delete(keyHash);
      for (const ws of this.scope.ctx.getWebSockets()) {
        if (this.attachmentOf(ws).rateKey !== keyHash) continue;
        const frames = this.held.get(ws) ?? [];
        this.held.delete(ws);
        if (active) for (const frame of frames) tell(ws, frame);
      }
      if (!active) this.closeSocketsOf(keyHash);
    };
    this.scope.ctx.waitUntil(answered());
  }
}
