// A `tool_results` frame while no model is configured is refused as POST /tool-results refuses
// it (503 model_not_configured) and nothing is taken: the results are not accepted, so the paused
// turn still waits on its calls and a later post (once the model is back) resumes it.
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../client/socket";
import { api, connectSocket, createConversation, inConversation, newTenant, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("a tool_results frame with no model configured", () => {
  it("is refused with 503 model_not_configured and accepts nothing; a later post resumes the turn", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const paused = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: '@tool get_weather {"city":"Paris"}', tools: [weather] },
      { key },
    );
    expect(paused.json.stop_reason).toBe("requires_action");
    const call = paused.json.requires_action!.calls[0].id;
    const before = (await transcript(id, key)).length;

    const own = await inConversation(id, (o) => {
      const env = o.env;
      o.env = { ...o.env, DEV_BOOTSTRAP: undefined, MODEL_PROVIDER: undefined, ANTHROPIC_API_KEY: undefined } as Env;
      return env;
    });
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    s.ws!.send(JSON.stringify({ type: "tool_results", results: [{ tool_use_id: call, content: "sunny" }] }));
    const refused = await s.next((f) => f.type === "error");
    expect(refused).toMatchObject({
      type: "error",
      turnId: null,
      error: { type: "model_not_configured", status: 503 },
    });
    // A ping after it: every frame before it was answered, so no turn started from the results.
    s.ws!.send(JSON.stringify({ type: "ping" }));
    await s.next((f) => f.type === "pong");
    expect(s.events.filter((f: ServerFrame) => f.type === "turn_start" || f.type === "turn_end")).toEqual([]);
    expect(await transcript(id, key)).toHaveLength(before);
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.requiresAction?.calls[0].id).toBe(
      call,
    );

    // The model is back: the same calls are still open, and a post resumes the turn with its results.
    await inConversation(id, (o) => {
      o.env = own;
    });
    const resumed = await api(
      "POST",
      `/v1/conversations/${id}/tool-results`,
      { results: [{ tool_use_id: call, content: "rainy" }] },
      { key },
    );
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.turnId).toBe(paused.json.turnId);
    s.ws!.close();
  });
});
