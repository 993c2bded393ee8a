// A paused turn's continuation "is a turn like any other, under the same turnId: a stop ends it the
// same way" (docs/api-notes.md "Stopping a turn"). The object's alarm (the wait's expiry, an outbox
// retry, the resume retry) may fire while the continuation is being set up or is still queued: it
// must not queue a second resume of the same turn, whose slot would hide the real continuation from
// the stop (which then stopped only the copy, and the continuation ran on to end_turn).
import { describe, expect, it } from "vitest";
import type { TurnOrder } from "../../durable-objects/conversation/turn-order";
import { TurnStops } from "../../durable-objects/conversation/turn-stops";
import { api, createConversation, eventually, inConversation, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Where the continuation is held while the alarm fires: in its setup (running), or queued behind a note's write. */
type Hold = "setup" | "queued";

async function scenario(hold: Hold) {
  const id = await createConversation();
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: `@tool get_weather {"city":"Paris"}`,
    tools: [weather],
  });
  const { turnId, calls } = paused.json.requires_action!;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  await inConversation(id, (i) => {
    if (hold === "setup") {
      // The continuation's setup (its prompt context read) takes a while: a slow D1 or tool listing.
      const cache = i.cache as unknown as { promptContext: (...a: unknown[]) => Promise<unknown> };
      const real = cache.promptContext.bind(i.cache);
      let n = 0;
      cache.promptContext = async (...a) => {
        if (n++ === 0) {
          held = true;
          await gate;
        }
        return real(...a);
      };
    } else {
      // An attachment's note being written (it goes in order with the turns): the continuation queues behind it.
      const order = (i as unknown as { order: TurnOrder }).order;
      void order.inOrder(() => gate);
      held = true;
    }
  });
  const posted = api("POST", `/v1/conversations/${id}/tool-results`, {
    results: [{ tool_use_id: calls[0].id, content: "sunny" }],
  });
  await eventually(async () => held || undefined);
  // The results are accepted (the continuation queued or running) before the alarm fires.
  await eventually(async () => (await inConversation(id, (i) => i.paused.get()))?.answers ?? null);
  const inFlight = () => inConversation(id, (i) => (i as unknown as { order: TurnOrder }).order.turnsInFlight);
  const before = await inFlight();
  await inConversation(id, (i) => {
    void (i as unknown as { alarm(): Promise<void> }).alarm();
  });
  await new Promise((r) => setTimeout(r, 300));
  // Nothing more was queued: the continuation under way is the turn's only one.
  const queued = { before, after: await inFlight() };
  const stopping = api("POST", `/v1/conversations/${id}/stop`, { turnId });
  await new Promise((r) => setTimeout(r, 300));
  release();
  const stop = await stopping;
  const post = await posted;
  const t = await transcript(id);
  return { stop: stop.json, postStop: post.json.stop_reason, t, queued };
}

describe("an alarm while a paused turn's continuation is under way", () => {
  for (const hold of ["setup", "queued"] as const) {
    it(`(${hold}) queues no second resume: a stop naming the turn ends the continuation`, async () => {
      const { stop, postStop, t, queued } = await scenario(hold);
      expect(queued).toEqual({ before: 1, after: 1 });
      expect(stop).toMatchObject({ stopped: true });
      expect(postStop).toBe("interrupted");
      // The client's result is saved (the call answered), and no model call followed it.
      const last = t.at(-1)!;
      expect(last.role).toBe("user");
      expect(last.content.some((b) => b.type === "tool_result")).toBe(true);
      expect(t.filter((m) => m.role === "assistant")).toHaveLength(1);
    });
  }
});

describe("TurnStops: a second entry under a live turn's id", () => {
  it("keeps the live slot: a stop naming the turn reaches the turn that runs", async () => {
    const stops = new TurnStops();
    const live = stops.enter("turn_1");
    let release!: () => void;
    const running = stops.run(
      live,
      (signal) => new Promise((r) => (release = () => r(signal.aborted ? "interrupted" : "end_turn"))),
    );
    const copy = stops.enter("turn_1");
    expect(copy).not.toBe(live);
    const stopping = stops.stop("turn_1");
    expect(live.controller.signal.aborted).toBe(true);
    expect(copy.controller.signal.aborted).toBe(false);
    release();
    await running;
    expect(await stopping).toEqual({ turnId: "turn_1", stopped: true });
  });
});
