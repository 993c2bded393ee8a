// Every refusal of a websocket frame carries the HTTP `status` the same request would have been
// answered with (docs/api-notes.md "Resuming a websocket"): a client reads one field, whichever
// channel it sent on. A conversation gone under a socket (a delete racing the frame) is a 404's
// `not_found`; an unknown attachment, or a frame that fails validation, a 400's `invalid_request`;
// a key over its limit is a 429's `rate_limited` (socket-large-frames.test.ts), a
// revoked key a 401's `authentication_error` (socket-revoked-queued.test.ts).
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, inConversation } from "./helpers";

/** The conversation's record, as the sockets read it, answering "no conversation" from now on. */
async function goneUnderTheSocket(id: string): Promise<void> {
  await inConversation(id, (o) => {
    const parts = (o as unknown as { sockets: { parts: { record: { load: () => Promise<null> } } } }).sockets.parts;
    parts.record = Object.assign(Object.create(parts.record) as object, { load: async () => null }) as {
      load: () => Promise<null>;
    };
  });
}

describe("a frame refused because its conversation is gone", () => {
  for (const frame of [
    { type: "send", content: "hello" },
    { type: "tool_results", results: [{ tool_use_id: "toolu_x", content: "ok" }] },
  ])
    it(`says 404 beside not_found (${frame.type})`, async () => {
      const id = await createConversation();
      const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
      await goneUnderTheSocket(id);
      s.ws!.send(JSON.stringify(frame));
      const refused = await s.next((e) => e.type === "error");
      expect(refused).toMatchObject({ type: "error", error: { type: "not_found", status: 404 } });
      s.ws!.close();
    });
});

describe("a frame refused as an invalid request", () => {
  it("says 400 beside invalid_request: an unknown attachment, as the POST of the same send", async () => {
    const id = await createConversation();
    const attachments = ["att_00000000000000000000000000"];
    const http = await api("POST", `/v1/conversations/${id}/messages`, { content: "hi", attachments });
    expect(http.status).toBe(400);
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    s.ws!.send(JSON.stringify({ type: "send", content: "hi", attachments }));
    const refused = await s.next((e) => e.type === "error");
    expect(refused).toMatchObject({
      error: { type: "invalid_request", status: 400, message: http.json.error?.message },
    });
    s.ws!.close();
  });

  it("says 400 beside invalid_request: a frame that fails validation", async () => {
    const id = await createConversation();
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    s.ws!.send(JSON.stringify({ type: "send" }));
    const refused = await s.next((e) => e.type === "error");
    expect(refused).toMatchObject({ turnId: null, error: { type: "invalid_request", status: 400 } });
    s.ws!.close();
  });
});
