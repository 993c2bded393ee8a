// A client-tool loop (POST /tool-results again and again) continues one turn: its model calls come
// out of that turn's maxToolIterations, as a server-tool loop's do, so the posts (each a request,
// no turn token) buy no model calls past what the one turn token allowed.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { createConversation, newTenant } from "./helpers";

type Answer = {
  stop_reason?: string;
  requires_action?: { calls: { id: string }[] };
  usage?: { output_tokens: number };
};

async function post(path: string, key: string, body: unknown) {
  const ctx = createExecutionContext();
  const limits = { RATE_LIMIT_PER_MINUTE: "1000", TURN_RATE_LIMIT_PER_MINUTE: "1" };
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
    { ...env, ...limits } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as Answer };
}

const ask = { name: "ask", description: "Asks the user.", input_schema: { type: "object", properties: {} } };

describe("a client-tool loop under the turn limit", () => {
  it("makes at most maxToolIterations model calls for its one turn token", async () => {
    const key = await newTenant();
    const id = await createConversation({ maxToolIterations: 4 }, key);
    const calls = Array.from({ length: 30 }, () => "@tool ask {}").join("\n");
    let r = await post(`/v1/conversations/${id}/messages`, key, {
      content: `loop\n@tools-per-step 1\n${calls}`,
      tools: [ask],
    });
    const stops = [r.json.stop_reason];
    const spent = [r.json.usage?.output_tokens];
    while (r.status === 200 && r.json.stop_reason === "requires_action" && stops.length < 30) {
      r = await post(`/v1/conversations/${id}/tool-results`, key, {
        results: r.json.requires_action!.calls.map((c) => ({ tool_use_id: c.id, content: "ok" })),
      });
      stops.push(r.json.stop_reason);
      spent.push(r.json.usage?.output_tokens);
    }
    // Four model calls (the message's and three continuations'); the fourth post's results end the
    // turn at its bound with no fifth call (its usage is the third continuation's).
    expect(stops).toEqual([
      "requires_action",
      "requires_action",
      "requires_action",
      "requires_action",
      "max_iterations",
    ]);
    expect(spent[4]).toBe(spent[3]);
    // The turn token went to the message; the posts took none, and no paused turn is left to post to.
    expect((await post(`/v1/conversations/${id}/messages`, key, { content: "again" })).status).toBe(429);
  });
});
