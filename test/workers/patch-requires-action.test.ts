// PATCH /v1/conversations/:id answers the same conversation view as GET: while a turn waits on
// client tools, `requiresAction` names its calls in both, and in neither once the turn went on.
import { describe, expect, it } from "vitest";
import { api, createConversation } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("PATCH of a conversation whose turn waits on client tools", () => {
  it("answers requiresAction as GET does, and drops it once the results are in", async () => {
    const id = await createConversation();
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool get_weather {"city":"Oslo"}`,
      tools: [weather],
    });
    expect(paused.json.stop_reason).toBe("requires_action");
    const [call] = paused.json.requires_action!.calls;

    const renamed = await api("PATCH", `/v1/conversations/${id}`, { title: "weather" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json.title).toBe("weather");
    expect(renamed.json.requiresAction).toEqual(paused.json.requires_action);
    expect((await api("GET", `/v1/conversations/${id}`)).json.requiresAction).toEqual(renamed.json.requiresAction);

    // A settings change answers the same view.
    const changed = await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 12 } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.requiresAction).toEqual(paused.json.requires_action);

    const posted = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "snow" }],
    });
    expect(posted.status, posted.text).toBe(200);
    const after = await api("PATCH", `/v1/conversations/${id}`, { title: "weather, answered" });
    expect(after.status).toBe(200);
    expect(after.json.requiresAction).toBeUndefined();
  });
});
