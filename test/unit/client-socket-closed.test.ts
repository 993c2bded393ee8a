// The typed client's websocket (client/socket.ts) against a real websocket server (`ws`): send()
// on a connection the server closed (1011), or while resume() reconnects, throws instead of
// dropping the frame; after the resume the frame goes through.
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConversationSocket } from "../../client/socket";

/** The part of the `ws` package (untyped here) this test uses. */
interface WsPeer {
  on(event: "message", listener: (data: { toString(): string }) => void): void;
  close(code?: number, reason?: string): void;
  send(data: string): void;
}
interface WsServer {
  on(event: "connection", listener: (ws: WsPeer) => void): void;
  on(event: "listening", listener: () => void): void;
  address(): AddressInfo;
  close(): void;
}
type WsModule = { WebSocketServer: new (opts: { port: number; host: string }) => WsServer };

const WS_PACKAGE = "ws";
const servers: WsServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A server that closes its first connection with 1011 and records the frames the others receive. */
async function flakyServer(): Promise<{ url: string; received: string[]; connections: () => number }> {
  const { WebSocketServer } = (await import(WS_PACKAGE)) as WsModule;
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  servers.push(server);
  await new Promise<void>((resolve) => server.on("listening", resolve));
  const received: string[] = [];
  let n = 0;
  server.on("connection", (ws) => {
    n++;
    if (n === 1) setTimeout(() => ws.close(1011, "internal error"), 20);
    else ws.on("message", (data) => received.push(data.toString()));
  });
  return { url: `ws://127.0.0.1:${server.address().port}/v1/conversations/c1/ws`, received, connections: () => n };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

describe("ConversationSocket.send on a connection that is not open", () => {
  it("throws when the server closed the connection (1011), and while resume() reconnects; sends after", async () => {
    const server = await flakyServer();
    const s = await ConversationSocket.open({ url: async () => server.url });
    await until(() => s.closeCode !== undefined);
    expect(s.closeCode).toBe(1011);
    expect(() => s.send({ type: "send", content: "lost?" })).toThrow(/not open \(closed, closed 1011 internal error\)/);
    const resuming = s.resume();
    expect(() => s.send({ type: "ping" })).toThrow(/not open \(resuming/);
    await resuming;
    s.send({ type: "send", content: "after the resume" });
    await until(() => server.received.length === 1);
    expect(JSON.parse(server.received[0])).toEqual({ type: "send", content: "after the resume" });
    expect(server.connections()).toBe(2);
    s.close();
    expect(() => s.send({ type: "ping" })).toThrow(/not open/);
  });
});
