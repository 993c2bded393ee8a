// A `send` queued behind a turn that then pauses on client tools is refused as one sent while it
// waits: `turn_paused` with its HTTP status, 409 (docs/api-notes.md, Resuming a websocket: "Every
// refusal of a frame carries its HTTP status when it has one").
import { describe, expect, it } from "vitest";
import { connectSocket, createConversation } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("a send queued before a pause", () => {
  it("is refused turn_paused with status 409, as one sent after the pause is", async () => {
    const id = await createConversation();
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const ws = sock.ws;
    if (!ws) throw new Error("no socket");
    const first = 'first\n@reply-chars 400\n@stream-pace 100\n@tool get_weather {"city":"Rome"}';
    ws.send(JSON.stringify({ type: "send", ref: "a", content: first, tools: [weather] }));
    await sock.next((e) => e.type === "delta");
    ws.send(JSON.stringify({ type: "send", ref: "b", content: "second" }));
    const accepted = (await sock.next((e) => e.type === "accepted" && "ref" in e && e.ref === "b")) as {
      turnId: string;
    };
    const queued = await sock.next((e) => e.type === "error" && "turnId" in e && e.turnId === accepted.turnId);
    ws.send(JSON.stringify({ type: "send", ref: "c", content: "third" }));
    const direct = await sock.next((e) => e.type === "error" && "ref" in e && e.ref === "c");
    expect((direct as { error: object }).error).toMatchObject({ type: "turn_paused", status: 409 });
    expect((queued as { error: object }).error).toMatchObject({ type: "turn_paused", status: 409 });
    ws.close();
  });
});
