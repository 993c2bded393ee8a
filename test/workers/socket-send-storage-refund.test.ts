import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, connectSocket, createConversation, inConversation, newTenant } from "./helpers";
import { breakHeadWrites, fileElsewhere } from "./unstartable-turn";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "0",
  TURN_RATE_LIMIT_PER_MINUTE: "1",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
};

const httpTurn = async (key: string, id: string): Promise<number> =>
  (await callWith(LIMITS, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content: "x" } }))
    .status;

/** A conversation of the key's whose object runs under LIMITS, and a file of another one to name in a turn. */
async function setUp() {
  const key = await newTenant();
  const id = await createConversation(undefined, key);
  const attachment = await fileElsewhere(key);
  await inConversation(id, async (instance) => {
    instance.env = { ...instance.env, ...LIMITS };
  });
  return { key, id, attachment };
}

describe("a websocket send whose turn never started for want of storage", () => {
  it("gives its turn token back: it saved nothing and called no model", async () => {
    const { key, id, attachment } = await setUp();
    // The object's head writes fail (past their retries): naming the file is refused before the model loop.
    await breakHeadWrites(id);
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    expect(s.status).toBe(101);
    s.ws!.send(JSON.stringify({ type: "send", content: "read my notes", attachments: [attachment] }));
    expect(await s.next((e) => e.type === "error")).toMatchObject({ error: { type: "storage_error" } });
    await s.next((e) => e.type === "turn_end");
    s.ws!.close();
    expect((await api("GET", `/v1/conversations/${id}/messages`, undefined, { key })).json.data).toEqual([]);
    const other = await createConversation(undefined, key);
    // The refund is given as the turn ends: the key's one turn of the minute comes back.
    let first = 429;
    for (let i = 0; i < 20 && first === 429; i++) {
      if (i) await new Promise((r) => setTimeout(r, 50));
      first = await httpTurn(key, other);
    }
    expect(first).toBe(200);
    expect(await httpTurn(key, other)).toBe(429);
  });

  it("keeps the token of a send whose turn ran", async () => {
    const { key, id } = await setUp();
    const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    s.ws!.send(JSON.stringify({ type: "send", content: "runs" }));
    expect(await s.next((e) => e.type === "turn_end")).toMatchObject({ stop_reason: "end_turn" });
    s.ws!.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(await httpTurn(key, await createConversation(undefined, key))).toBe(429);
  });
});
