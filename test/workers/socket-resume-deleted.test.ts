// A resuming socket (`/ws?after=`) reads the paused turn between finding the conversation and
// being accepted (durable-objects/conversation/sockets.ts `upgrade`). A delete landing in that
// gap closes the sockets it finds, before this one exists: the upgrade must not then open a socket
// on the deleted conversation, which no one would ever close.
import { describe, expect, it } from "vitest";
import type { PausedTurns } from "../../durable-objects/conversation/paused-turn";
import { api, connectSocket, createConversation, inConversation, send } from "./helpers";

describe("a socket resuming while the conversation is deleted", () => {
  it("is not opened when the delete lands while its upgrade reads the paused turn", async () => {
    const id = await createConversation();
    expect((await send(id, "hello")).status).toBe(200);
    // The resume's read of the paused turn waits until the test lets it go.
    const gate = { reached: false, open: false };
    await inConversation(id, (o) => {
      // The sockets' own view of the paused turns (the route's existence check reads the object's).
      const parts = (o as unknown as { sockets: { parts: { paused: PausedTurns } } }).sockets.parts;
      const real = parts.paused;
      parts.paused = Object.assign(Object.create(real) as PausedTurns, {
        get: async () => {
          gate.reached = true;
          while (!gate.open) await new Promise((r) => setTimeout(r, 10));
          return real.get();
        },
      });
    });
    const connecting = connectSocket(`/v1/conversations/${id}/ws?after=0`, { authorization: "Bearer dev-local-key" });
    while (!gate.reached) await new Promise((r) => setTimeout(r, 10));
    expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(204);
    gate.open = true;
    const s = await connecting;
    // Not opened (one opened here would be left open on a deleted conversation: nothing closes it).
    expect(s.ws).toBeNull();
    expect(s.status).toBe(404);
  });
});
