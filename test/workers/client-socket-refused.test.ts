// The typed client's socket() against the real chat worker when the server refuses it: with the
// key in a header, the refusal is the server's ApiError (status and body), as in ticket mode,
// rather than a bare "websocket refused"; a keyless client with a ticket still opens.
import { describe, expect, it } from "vitest";
import { ApiError, createClient } from "../../client";
import { createConversation, DEV_KEY, worker } from "./helpers";

const clientFor = (opts: { key?: string; socketAuth?: "header" | "ticket" }) =>
  createClient({
    baseUrl: "http://chat.test",
    ...opts,
    fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
      worker().fetch(new Request(String(input), init))) as typeof fetch,
    // As the global WebSocket does, a refused upgrade tells nothing of why.
    webSocket: async (url, init) => {
      const res = await worker().fetch(
        new Request(url.replace(/^ws/, "http"), { headers: { upgrade: "websocket", ...init?.headers } }),
      );
      if (!res.webSocket) throw new Error("websocket refused");
      res.webSocket.accept();
      return res.webSocket;
    },
  });

/** What `p` rejects with. */
async function refusal(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("not refused");
}

const UNKNOWN = "conv_01M99999999999999999999999";

describe("a refused client socket", () => {
  for (const socketAuth of ["header", "ticket"] as const)
    it(`(${socketAuth} auth) an unknown conversation throws the server's 404 ApiError`, async () => {
      const e = await refusal(clientFor({ key: DEV_KEY, socketAuth }).socket(UNKNOWN));
      expect(e).toBeInstanceOf(ApiError);
      expect(e).toMatchObject({ status: 404, body: { error: { type: "not_found" } } });
    });

  it("(header auth) a bad key throws the server's 401 ApiError", async () => {
    const id = await createConversation();
    const e = await refusal(clientFor({ key: "not-a-key" }).socket(id));
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 401, body: { error: { type: "authentication_error" } } });
  });

  it("a keyless client with a ticket still opens (its cursor lookup is refused, so it connects without one)", async () => {
    const id = await createConversation();
    const r = await clientFor({ key: DEV_KEY }).request("POST /v1/conversations/{id}/ws-ticket", { path: { id } });
    expect(r.status, r.text).toBe(201);
    const s = await clientFor({}).socket(id, { ticket: String(r.data.ticket) });
    expect(s.socket.readyState).toBe(1);
    s.close();
  });
});
