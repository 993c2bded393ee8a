import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, createConversation, newTenant } from "./helpers";
import { breakHeadWrites, fileElsewhere } from "./unstartable-turn";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "1",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
};

const turn = (key: string, id: string, body: { content: string; attachments?: string[] }) =>
  callWith(LIMITS, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body });

describe("a turn that never started for want of storage", () => {
  it("gives its turn token back: its 502 storage_error saved nothing and called no model", async () => {
    const key = await newTenant();
    const broken = await createConversation(undefined, key);
    const other = await createConversation(undefined, key);
    // A file of another conversation: naming it in a turn activates its tools, a head write before the model loop.
    const file = await fileElsewhere(key);
    // The object's head writes fail (past their retries): the turn is refused before its model loop.
    await breakHeadWrites(broken);
    const refused = await turn(key, broken, { content: "read my notes", attachments: [file] });
    expect(refused.status).toBe(502);
    expect(refused.json).toMatchObject({ error: { type: "storage_error" } });
    expect((await api("GET", `/v1/conversations/${broken}/messages`, undefined, { key })).json.data).toEqual([]);
    // The key's one turn of the minute is still there.
    expect((await turn(key, other, { content: "runs" })).status).toBe(200);
    expect((await turn(key, other, { content: "over the limit" })).status).toBe(429);
  });
});
