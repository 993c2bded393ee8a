import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { connectSocket, createConversation, inConversation, newTenant } from "./helpers";

/** A turn over HTTP through the app with its real bindings but these limits. */
const httpTurn = async (limits: Record<string, string>, key: string, id: string): Promise<number> =>
  (
    await callWith(limits, {
      method: "POST",
      path: `/v1/conversations/${id}/messages`,
      key,
      body: { content: "a real turn" },
    })
  ).status;

const UNKNOWN_ATTACHMENT = "att_00000000000000000000000000";

/** Two `send` frames naming an attachment that is not there, each refused; then the real turns the limit allows. */
async function refusedSendsThenTurns(limits: Record<string, string>): Promise<number[]> {
  const key = await newTenant();
  const id = await createConversation(undefined, key);
  await inConversation(id, async (instance) => {
    instance.env = { ...instance.env, ...limits };
  });
  const s = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
  expect(s.status).toBe(101);
  for (let i = 0; i < 2; i++)
    s.ws!.send(JSON.stringify({ type: "send", content: "x", attachments: [UNKNOWN_ATTACHMENT] }));
  await s.next(() => s.events.filter((e) => e.type === "error").length === 2);
  for (const e of s.events.filter((e) => e.type === "error"))
    expect(e).toMatchObject({ error: { type: "invalid_request" } });
  s.ws!.close();
  return [await httpTurn(limits, key, id), await httpTurn(limits, key, id), await httpTurn(limits, key, id)];
}

describe("a websocket send refused before it runs", () => {
  it("gives the key's turn token back", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "2",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
    };
    // The two refused sends spent nothing: two real turns run, the third of the minute is over the limit.
    expect(await refusedSendsThenTurns(limits)).toEqual([200, 200, 429]);
  });

  it("gives the tenant's turn token back", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "0",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "2",
    };
    expect(await refusedSendsThenTurns(limits)).toEqual([200, 200, 429]);
  });
});
