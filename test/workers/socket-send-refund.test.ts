// A websocket `send` frame refused after its turn tokens were taken (an unknown attachment, a refused
// Idempotency-Key, a paused turn, a regenerate that cannot run) gives them back, the key's and its
// tenant's, as a POST of messages refused before it runs does: it never ran.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { connectSocket, createConversation, inConversation, newTenant } from "./helpers";

/** A turn over HTTP through the app with its real bindings but these limits. */
async function httpTurn(limits: Record<string, string>, key: string, id: string): Promise<number> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "a real turn" }),
    }),
    { ...env, ...limits } as Env,
    ctx,
  );
  await res.text();
  await waitOnExecutionContext(ctx);
  return res.status;
}

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
