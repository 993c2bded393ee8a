// A turn queued behind another when the conversation's object restarts: it never ends silently.
// SSE ends with `error {type: "turn_interrupted"}` and `turn_end {stop_reason: "error"}` naming the
// turnId `turn_queued` gave it; JSON answers 502 turn_interrupted with that turnId.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, conversationStub, createConversation, eventually, transcript } from "./helpers";

/** Turns queued or running in the object (its TurnOrder), read in place. */
const inFlight = (id: string) =>
  runInDurableObject(conversationStub(id), (instance) =>
    Promise.resolve((instance as unknown as { order: { turnsInFlight: number } }).order.turnsInFlight),
  );

describe("a queued turn whose object restarts", () => {
  it("ends with turn_interrupted (SSE: error then turn_end; JSON: 502 naming the queued turnId)", async () => {
    const id = await createConversation();
    const path = `/v1/conversations/${id}/messages` as const;
    const holding = api("POST", path, { content: "hold\n@hold-stream after=10" });
    await eventually(async () => (await transcript(id)).length === 1);
    const streamed = api("POST", path, { content: "queued, streamed" }, { headers: { accept: "text/event-stream" } });
    const json = api("POST", path, { content: "queued, json" });
    // Both are queued behind the holding turn (three in flight) before the object goes.
    await eventually(async () => (await inFlight(id)) === 3);
    await runInDurableObject(conversationStub(id), (_i, state) => state.abort("injected crash")).catch(() => {});
    await holding.catch(() => {});

    const sse = await streamed;
    expect(sse.status).toBe(200);
    const events = [...sse.text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map(
      (m) => JSON.parse(m[2]) as { type: string; turnId: string; error?: { type: string }; stop_reason?: string },
    );
    expect(events[0].type).toBe("turn_queued");
    const queuedId = events[0].turnId;
    expect(queuedId).toMatch(/^turn_/);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["error", "turn_end"]);
    expect(events.at(-2)).toMatchObject({ turnId: queuedId, error: { type: "turn_interrupted" } });
    expect(events.at(-1)).toMatchObject({ turnId: queuedId, stop_reason: "error" });

    const answer = await json;
    expect(answer.status).toBe(502);
    expect(answer.json.error?.type).toBe("turn_interrupted");
    expect(answer.json.turnId).toMatch(/^turn_/);
    expect(answer.json.turnId).not.toBe(queuedId);
    expect(answer.json.messages).toEqual([]);
  });
});
