import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, createConversation, newTenant } from "./helpers";
import { breakHeadWrites, fileElsewhere } from "./unstartable-turn";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "1",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
};

const turn = (key: string, id: string, body: { content: string; attachments?: string[] }, sse = false) =>
  callWith(LIMITS, {
    method: "POST",
    path: `/v1/conversations/${id}/messages`,
    key,
    body,
    ...(sse ? { headers: { accept: "text/event-stream" } } : {}),
  });

describe("an SSE turn that never started for want of storage", () => {
  it("gives its turn token back once its stream ends: it saved nothing and called no model", async () => {
    const key = await newTenant();
    const broken = await createConversation(undefined, key);
    const other = await createConversation(undefined, key);
    // A file of another conversation: naming it in a turn activates its tools, a head write before the model loop.
    const file = await fileElsewhere(key);
    await breakHeadWrites(broken);
    // callWith reads the stream out and waits for the request's background work.
    const sse = await turn(key, broken, { content: "read my notes", attachments: [file] }, true);
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect((await api("GET", `/v1/conversations/${broken}/messages`, undefined, { key })).json.data).toEqual([]);
    // The key's one turn of the minute is still there.
    expect((await turn(key, other, { content: "runs" })).status).toBe(200);
    expect((await turn(key, other, { content: "over the limit" })).status).toBe(429);
  });

  it("keeps the token of an SSE turn that ran", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await turn(key, id, { content: "runs over SSE" }, true)).status).toBe(200);
    expect((await turn(key, id, { content: "over the limit" })).status).toBe(429);
  });
});
