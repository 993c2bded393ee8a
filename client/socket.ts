// A conversation's websocket as an async iterator of frames that keeps the resume cursor: the
// highest message seq it has seen. resume() reconnects with ?after=<that seq>, so the server
// sends what was saved meanwhile (then a `resumed` frame) and nothing twice.
import type { Schemas } from "./api-types.gen";

export type ServerFrame = Schemas["SocketServerFrame"];
export type ClientFrame = Schemas["SocketClientFrame"];

export interface SocketTarget {
  /** The socket URL without `after` (ws:// or wss://, with ?ticket= when one is used). */
  url(): Promise<string>;
  /** Options for the WebSocket constructor (Node's accepts `headers`; browsers use a ticket). */
  init?: unknown;
}

export class ConversationSocket implements AsyncIterable<ServerFrame> {
  /** Every frame received, in order, across reconnects. */
  readonly frames: ServerFrame[] = [];
  /** The resume cursor: the highest message seq received. */
  lastSeq: number;
  private ws!: WebSocket;
  private closed = false;
  private reconnecting = false;
  private wake: (() => void)[] = [];

  private constructor(
    private readonly target: SocketTarget,
    after: number | undefined,
  ) {
    this.lastSeq = after ?? 0;
  }

  static async open(target: SocketTarget, after?: number): Promise<ConversationSocket> {
    const socket = new ConversationSocket(target, after);
    await socket.connect(after);
    return socket;
  }

  private async connect(after: number | undefined) {
    const url = new URL(await this.target.url());
    if (after !== undefined) url.searchParams.set("after", String(after));
    const ws = new WebSocket(url.toString(), this.target.init as string[] | undefined);
    ws.addEventListener("message", (m) => {
      const frame = JSON.parse(String(m.data)) as ServerFrame;
      if (frame.type === "message" && typeof frame.message.seq === "number")
        this.lastSeq = Math.max(this.lastSeq, frame.message.seq);
      this.frames.push(frame);
      this.notify();
    });
    ws.addEventListener("close", () => {
      if (this.ws === ws) this.notify();
    });
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve());
      ws.addEventListener("error", () => reject(new Error("websocket refused")));
    });
    this.ws = ws;
  }

  private notify() {
    for (const w of this.wake.splice(0)) w();
  }

  get socket(): WebSocket {
    return this.ws;
  }

  send(frame: ClientFrame) {
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame, received or still to come, that `pred` accepts. */
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
        } else this.wake.push(check);
      };
      check();
    });
  }

  /** Drops the connection and reconnects from the resume cursor. */
  async resume(): Promise<void> {
    this.reconnecting = true;
    try {
      this.ws.close();
      await this.connect(this.lastSeq);
    } finally {
      this.reconnecting = false;
      this.notify();
    }
  }

  close() {
    this.closed = true;
    this.ws.close();
    this.notify();
  }

  /** The frames from the first one on; ends when the socket is closed (by either side). */
  async *[Symbol.asyncIterator](): AsyncIterator<ServerFrame> {
    for (let i = 0; ; ) {
      if (i < this.frames.length) yield this.frames[i++];
      else if (this.closed || (!this.reconnecting && this.ws.readyState >= WebSocket.CLOSING)) return;
      else await new Promise<void>((r) => this.wake.push(r));
    }
  }
}
