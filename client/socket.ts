// A conversation's websocket as an async iterator of frames that keeps the resume cursor: the
// highest message seq it has seen. resume() reconnects with ?after=<that seq>, so the server
// sends what was saved meanwhile (then a `resumed` frame) and nothing twice:
// - A socket opened without a cursor learns one first (the conversation's lastSeq, through
//   SocketTarget.lastSeq) and connects from it, so what is saved while it connects comes as the
//   first connection's catch-up and a resume never asks for the whole history (that connection's
//   `resumed` frame is not in `frames`: the caller asked for no resume); without a way to learn it,
//   the socket connects (and resume() reconnects) without a cursor.
// - The server sends at most 500 messages on a resume (`resumed` with `more: true`): the socket
//   pages the rest (through SocketTarget.messagesAfter, up to the `resumed` frame's lastSeq) and
//   delivers them, in seq order, before the running turn's frames and every live frame. The frames
//   of a resuming connection are held until its `resumed` frame for that.
// - A turn running at the resume comes back as its `turn_start` with `resumed: true` and what it
//   streamed since its last saved message: the `delta`/`thinking` frames of that turn received
//   before the drop since its last `message` frame are then dropped from `frames` (they are either
//   in a message of the catch-up or streamed again), so the turn's joined text is never doubled.
//   An iterator that already yielded them sees the `turn_start` with `resumed: true`: its cue to
//   start the unsaved part of that turn over.
// - Each turn still queued at the resume comes back (after the running turn's frames) as its
//   `turn_queued` with `resumed: true`: the id a `stop` frame names to cancel it before it starts.
// - Close codes are kept (`closeCode`, `closeReason`); next() rejects as soon as the socket is
//   closed without the frame it waits for.
// - One connection at a time: a resume() while one runs shares it (two reconnects would leave two
//   connections delivering every frame). The connection a resume replaces first delivers what it
//   holds (a catch-up being paged: a turn that ended meanwhile is not sent again by the next one),
//   then is retired: what it sends after that is dropped, since the cursor counts only delivered
//   frames and the new connection's catch-up sends those again (delivering both would double them).
//   A connection that opens after close() is closed at once.
import type { Schemas } from "./api-types.gen";

export type ServerFrame = Schemas["SocketServerFrame"];
export type ClientFrame = Schemas["SocketClientFrame"];
type Message = Schemas["Message"];
type ResumedFrame = Extract<ServerFrame, { type: "resumed" }>;

export interface SocketTarget {
  /** The socket URL without `after` (ws:// or wss://, with ?ticket= when one is used). */
  url(): Promise<string>;
  /** Options for the WebSocket constructor (Node's accepts `headers`; browsers use a ticket). */
  init?: unknown;
  /** Opens the socket at `url` and resolves once it is open. Default: the global WebSocket. */
  open?(url: string, init: unknown): Promise<WebSocket>;
  /**
   * The conversation's current last seq: the cursor of a socket opened without one. Undefined
   * when it cannot be learned (a client without a key); an error it throws is open()'s error.
   */
  lastSeq?(): Promise<number | undefined>;
  /** The saved messages after a seq, in seq order (GET …/messages?after=): what a resume left to page. */
  messagesAfter?(after: number): AsyncIterable<Message>;
}

/** One connection's state: a resuming one holds its frames until its `resumed` frame. */
interface Connection {
  ws: WebSocket;
  holding: boolean;
  held: ServerFrame[];
  /** Frames are handled one after another (paging awaits), the close after them. */
  chain: Promise<void>;
  /** The first connection of a socket opened without a cursor: its catch-up is delivered, its `resumed` frame not. */
  hideResumed: boolean;
  /** Replaced by a resume: its frames are dropped (the new connection's catch-up sends them again). */
  retired: boolean;
}

/** WebSocket.readyState values (spelled out: not every runtime has the WebSocket global's constants). */
const OPEN = 1;
const stateName = (state: number) => ["connecting", "open", "closing", "closed"][state] ?? `state ${state}`;

async function openDefault(url: string, init: unknown): Promise<WebSocket> {
  const ws = new WebSocket(url, init as string[] | undefined);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error("websocket refused")));
  });
  return ws;
}

export class ConversationSocket implements AsyncIterable<ServerFrame> {
  /** Every frame received, in order, across reconnects (superseded deltas of a resumed turn dropped). */
  readonly frames: ServerFrame[] = [];
  /** The resume cursor: the highest message seq received (or learned when opened). */
  lastSeq: number;
  /** Whether lastSeq is a real cursor (given, learned or received). */
  private cursorKnown: boolean;
  /** The close code and reason of the current connection, once it closed. */
  closeCode: number | undefined;
  closeReason: string | undefined;
  private ws!: WebSocket;
  private conn!: Connection;
  private closed = false;
  /** The resume under way: a resume() meanwhile gets it rather than a second connection. */
  private resuming: Promise<void> | null = null;
  /** The current connection closed and every frame before its close was handled. */
  private ended = false;
  private wake: (() => void)[] = [];
  /** The positions of running iterators in `frames` (moved when frames before them are dropped). */
  private readonly cursors = new Set<{ i: number }>();

  private constructor(
    private readonly target: SocketTarget,
    after: number | undefined,
  ) {
    this.lastSeq = after ?? 0;
    this.cursorKnown = after !== undefined;
  }

  static async open(target: SocketTarget, after?: number): Promise<ConversationSocket> {
    const socket = new ConversationSocket(target, after);
    // No cursor given: learn the conversation's last seq before connecting and connect from it,
    // so a message saved between the two comes in the connection's catch-up rather than never.
    // A lookup that cannot tell (a ticket-only client without a key) leaves the cursor unknown; one
    // that fails is the caller's error (with a key, the server's refusal: the socket would be refused too).
    if (after === undefined && target.lastSeq) {
      const learned = await target.lastSeq();
      if (learned !== undefined) {
        socket.lastSeq = learned;
        socket.cursorKnown = true;
      }
    }
    // The caller asked for no resume: that connection's `resumed` frame is not shown (its catch-up is).
    await socket.connect(socket.cursorKnown ? socket.lastSeq : undefined, after === undefined);
    return socket;
  }

  private async connect(after: number | undefined, hideResumed = false) {
    const url = new URL(await this.target.url());
    if (after !== undefined) url.searchParams.set("after", String(after));
    const ws = await (this.target.open ?? openDefault)(url.toString(), this.target.init);
    // Closed while this connection opened: nobody is left to read it.
    if (this.closed) {
      ws.close();
      return;
    }
    const conn: Connection = {
      ws,
      holding: after !== undefined,
      held: [],
      chain: Promise.resolve(),
      hideResumed,
      retired: false,
    };
    ws.addEventListener("message", (m) => {
      if (conn.retired) return;
      const frame = JSON.parse(String(m.data)) as ServerFrame;
      conn.chain = conn.chain.then(() => this.receive(conn, frame));
    });
    ws.addEventListener("close", (e) => {
      conn.chain = conn.chain.then(() => {
        // A resume cut short: what it sent is still in order.
        if (conn.holding) this.release(conn);
        if (this.ws !== ws) return;
        this.closeCode = e.code;
        this.closeReason = e.reason;
        this.ended = true;
        this.notify();
      });
    });
    this.ws = ws;
    this.conn = conn;
    this.ended = false;
    this.closeCode = undefined;
    this.closeReason = undefined;
  }

  private async receive(conn: Connection, frame: ServerFrame): Promise<void> {
    // Frames queued behind a paging when a resume retired the connection.
    if (conn.retired) return;
    if (!conn.holding) return this.deliver(frame);
    conn.held.push(frame);
    if (frame.type !== "resumed") return;
    const paged = frame.more ? await this.page(frame).catch(() => null) : [];
    // Retired while paging: the new connection's catch-up brings all of it.
    if (conn.retired) return;
    if (paged === null) {
      // Paging failed: deliver what came, and let the server page from the new cursor instead.
      this.release(conn);
      // A resume already under way waits for this handling to end, and reconnects itself.
      if (this.ws === conn.ws && !this.closed && !this.resuming)
        await this.resumeWith({ settle: false }).catch(() => {});
      return;
    }
    this.release(conn, paged);
  }

  /** The messages a resume left out: after its `through`, up to its `lastSeq` (later ones arrive live). */
  private async page(resumed: ResumedFrame): Promise<Message[]> {
    if (!this.target.messagesAfter) throw new Error("no way to page the messages");
    const out: Message[] = [];
    for await (const m of this.target.messagesAfter(resumed.through)) {
      if (m.seq > resumed.lastSeq) break;
      if (m.seq > resumed.through) out.push(m);
    }
    return out;
  }

  /** A resuming connection's held frames: its catch-up messages, the paged ones, then the rest. */
  private release(conn: Connection, paged: Message[] = []) {
    if (conn.retired) return;
    const held = conn.held.splice(0);
    conn.holding = false;
    let at = 0;
    while (at < held.length && held[at].type === "message") at++;
    const pagedFrames = paged.map((message) => ({ type: "message", turnId: "resume", message }) as ServerFrame);
    for (const frame of [...held.slice(0, at), ...pagedFrames, ...held.slice(at)])
      if (frame.type !== "resumed" || !conn.hideResumed) this.deliver(frame);
  }

  private deliver(frame: ServerFrame) {
    if (frame.type === "message" && typeof frame.message.seq === "number") {
      this.lastSeq = this.cursorKnown ? Math.max(this.lastSeq, frame.message.seq) : frame.message.seq;
      this.cursorKnown = true;
    }
    if (frame.type === "turn_start" && frame.resumed) this.dropUnsaved(frame.turnId);
    this.frames.push(frame);
    this.notify();
  }

  /** The `delta`/`thinking` frames of a turn since its last `message` frame: superseded by a resume. */
  private dropUnsaved(turnId: string) {
    const of = (f: ServerFrame) => "turnId" in f && f.turnId === turnId;
    let from = 0;
    for (let i = this.frames.length - 1; i >= 0; i--)
      if (this.frames[i].type === "message" && of(this.frames[i])) {
        from = i + 1;
        break;
      }
    const drop = new Set<number>();
    for (let i = from; i < this.frames.length; i++) {
      const f = this.frames[i];
      if ((f.type === "delta" || f.type === "thinking") && of(f)) drop.add(i);
    }
    if (!drop.size) return;
    for (const c of this.cursors) c.i -= [...drop].filter((i) => i < c.i).length;
    const kept = this.frames.filter((_, i) => !drop.has(i));
    this.frames.splice(0, this.frames.length, ...kept);
  }

  private notify() {
    for (const w of this.wake.splice(0)) w();
  }

  /** Whether no frame will come any more (closed by us, or the connection ended and no resume runs). */
  private get over(): boolean {
    return this.closed || (!this.reconnecting && this.ended);
  }

  private get reconnecting(): boolean {
    return this.resuming !== null;
  }

  get socket(): WebSocket {
    return this.ws;
  }

  /**
   * Sends a frame on the current connection. Throws (never drops the frame silently) when that
   * connection is not open: closed or closing (see closeCode), or replaced while resume() runs.
   * Nothing is queued: after such an error, await resume() and send the frame again (a `send`
   * frame's `ref`, or `turnsInFlight` of the `resumed` frame, tells whether it was taken; with the
   * same `idempotencyKey` a send already taken is not run twice: while its turn is queued or
   * running the `idempotency_in_progress` error frame carries that turn's `turnId`).
   */
  send(frame: ClientFrame) {
    const state = this.reconnecting ? "resuming" : this.ws.readyState === OPEN ? null : stateName(this.ws.readyState);
    if (state !== null)
      throw new Error(
        `websocket not open (${state}${this.closeCode !== undefined ? `, closed ${this.closeCode}${this.closeReason ? ` ${this.closeReason}` : ""}` : ""}): the ${frame.type} frame was not sent; await resume() and send it again`,
      );
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame, received or still to come, that `pred` accepts; rejects when the socket closes first. */
  next<T extends ServerFrame = ServerFrame>(pred: (f: ServerFrame) => boolean, timeoutMs = 20_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out; saw ${this.frames.map((f) => f.type).join(",")}`)),
        timeoutMs,
      );
      const check = () => {
        const hit = this.frames.find(pred);
        if (hit) {
          clearTimeout(timer);
          resolve(hit as T);
        } else if (this.over) {
          clearTimeout(timer);
          reject(
            new Error(
              `socket closed (${this.closeCode ?? "by the client"}${this.closeReason ? ` ${this.closeReason}` : ""}); saw ${this.frames.map((f) => f.type).join(",")}`,
            ),
          );
        } else this.wake.push(check);
      };
      check();
    });
  }

  /**
   * Drops the connection and reconnects from the resume cursor (without one when none is known).
   * A call while a resume runs gets that resume's promise.
   */
  resume(): Promise<void> {
    return this.resumeWith({ settle: true });
  }

  private resumeWith({ settle }: { settle: boolean }): Promise<void> {
    this.resuming ??= this.reconnect({ settle }).finally(() => {
      this.resuming = null;
      this.notify();
    });
    return this.resuming;
  }

  private async reconnect({ settle }: { settle: boolean }) {
    const old = this.conn;
    this.ws.close();
    // What the replaced connection holds (a catch-up being paged) is delivered before the cursor is
    // read: the next connection's catch-up sends saved messages again, but not the frames of a turn
    // that ended meanwhile (its turn_end among them), so they must come from this one. Then it is
    // retired: anything it still sends is the next one's to deliver, after the cursor.
    // `settle` false: called from that connection's own frame handling, its frames already out.
    if (settle) await old.chain.catch(() => {});
    old.retired = true;
    await this.connect(this.cursorKnown ? this.lastSeq : undefined);
  }

  close() {
    this.closed = true;
    this.ws.close();
    this.notify();
  }

  /** The frames from the first one on; ends when the socket is closed (by either side). */
  async *[Symbol.asyncIterator](): AsyncIterator<ServerFrame> {
    const cursor = { i: 0 };
    this.cursors.add(cursor);
    try {
      for (;;) {
        if (cursor.i < this.frames.length) yield this.frames[cursor.i++];
        else if (this.over) return;
        else await new Promise<void>((r) => this.wake.push(r));
      }
    } finally {
      this.cursors.delete(cursor);
    }
  }
}
