// The typed client's turn(): a turn queued behind another counts as started (turn_queued names it,
// and it ends with a turn_end, as the server's SSE answer holds), so an `error` after it is not a
// refusal. A key revoked while the turn waits ends the stream with authentication_error while the
// turn runs on: the client throws ApiError 401 rather than ending quietly as if nothing ran.
import { describe, expect, it } from "vitest";
import { ApiError, Client, type TurnEvent } from "../../client";
import { api, createConversation, eventually, newTenant, transcript, worker } from "./helpers";

describe("the typed client's turn, queued", () => {
  it("throws ApiError 401 when its key is revoked while the turn waits in the queue", async () => {
    const owner = await newTenant();
    const other = (await api("POST", "/v1/keys", {}, { key: owner })).json as { apiKey: string; key: { id: string } };
    const id = await createConversation(undefined, owner);
    const first = worker().fetch(
      new Request(`http://chat.test/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${owner}`, "content-type": "application/json" },
        body: JSON.stringify({ content: "hold\n@reply-chars 200\n@hold-stream after=10" }),
      }),
    );
    await eventually(async () => ((await transcript(id, owner)).length >= 1 ? true : null));
    const client = new Client({
      baseUrl: "http://chat.test",
      key: other.apiKey,
      fetch: async (input, init) => worker().fetch(new Request(input as string, init)),
    });
    const events: TurnEvent[] = [];
    let thrown: unknown = null;
    try {
      for await (const e of client.turn(id, { content: "queued one" })) {
        events.push(e);
        if (e.type === "turn_queued") await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: owner });
      }
    } catch (err) {
      thrown = err;
    }
    await api("POST", `/v1/conversations/${id}/stop`, {}, { key: owner });
    await first;
    expect(events.map((e) => e.type)).toEqual(["turn_queued", "error"]);
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status).toBe(401);
    // The queued turn ran all the same: its prompt is in the transcript.
    const saved = await eventually(async () => {
      const m = await transcript(id, owner);
      return m.length >= 4 ? m : null;
    }, 20_000);
    expect(JSON.stringify(saved)).toContain("queued one");
  }, 60_000);
});
