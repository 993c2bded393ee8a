// A pinned (dated) model id is kept as the user sent it, by POST and PATCH alike, and it is what the
// turn sends: /replay shows "exactly what the next model request would carry" (API.md).
import { describe, expect, it } from "vitest";
import { api, createConversation, sendSse, transcript } from "./helpers";

const PINNED = "claude-haiku-4-5-20251001";

describe("a pinned model id in settings.model", () => {
  it("is stored as sent by POST and by PATCH", async () => {
    const viaPost = await api("POST", "/v1/conversations", { settings: { model: PINNED } });
    expect(viaPost.status).toBe(201);
    expect(viaPost.json.settings.model).toBe(PINNED);
    const id = await createConversation();
    const viaPatch = await api("PATCH", `/v1/conversations/${id}`, { settings: { model: PINNED } });
    expect(viaPatch.status).toBe(200);
    expect(viaPatch.json.settings.model).toBe(PINNED);
    // Both moved to the model's figures alike.
    expect(viaPatch.json.settings).toEqual({ ...viaPost.json.settings });
  });

  it("is the id the turn sends, as /replay shows it", async () => {
    const id = await createConversation();
    await api("PATCH", `/v1/conversations/${id}`, { settings: { model: PINNED } });
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json as { model: string };
    expect(replay.model).toBe(PINNED);
    // The offline model refuses only when the request names exactly this id.
    const events = await sendSse(id, `@stop refusal model=${PINNED}\nhello`);
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "refusal" });
    const assistant = (await transcript(id)).filter((m) => m.role === "assistant");
    expect(assistant.map((m) => m.model)).toEqual([PINNED]);
  });

  it("created by POST is what the turn sends", async () => {
    const id = await createConversation({ model: PINNED });
    await sendSse(id, "hello");
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json as { model: string };
    expect(replay.model).toBe(PINNED);
    const assistant = (await transcript(id)).filter((m) => m.role === "assistant");
    expect(assistant.map((m) => m.model)).toEqual([PINNED]);
  });
});
