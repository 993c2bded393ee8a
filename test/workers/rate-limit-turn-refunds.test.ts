import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { createConversation, newTenant } from "./helpers";

const call = callWith;

const UNKNOWN = "conv_0000000000000000000000ZZZZ";

/** Turn requests that can never run, each with the status it gets. */
const refusedTurns = (id: string): [Parameters<typeof call>[1], number][] => [
  [{ method: "POST", path: `/v1/conversations/${UNKNOWN}/messages`, key: "", body: { content: "hi" } }, 404],
  [{ method: "POST", path: "/v1/conversations/not-an-id/messages", key: "", body: { content: "hi" } }, 404],
  [{ method: "POST", path: `/v1/conversations/${id}/messages`, key: "", body: { content: "   " } }, 400],
  [{ method: "POST", path: `/v1/conversations/${id}/messages`, key: "", body: { nope: 1 } }, 400],
  [{ method: "POST", path: "/v1/channels/inbox/messages", key: "", body: { content: "   " } }, 400],
  [{ method: "POST", path: "/v1/channels/.bad/messages", key: "", body: { content: "hi" } }, 404],
  [
    {
      method: "POST",
      path: "/v1/channels/inbox/messages",
      key: "",
      body: { content: "hi" },
      headers: { "idempotency-key": "k1" },
    },
    400,
  ],
];

describe("turn requests refused before they run", () => {
  it("give the key's turn token back: the first real turn after them is not refused", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "1000", TURN_RATE_LIMIT_PER_MINUTE: "2" };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    for (const [request, status] of refusedTurns(id)) {
      const r = await call(limits, { ...request, key });
      expect(r.status, request.path).toBe(status);
    }
    const turn = () =>
      call(limits, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content: "ok" } });
    expect((await turn()).status).toBe(200);
    expect((await turn()).status).toBe(200);
    // The limit itself still holds: the third real turn of the minute is refused.
    const over = await turn();
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/2 turns per minute/);
  });

  it("give the tenant's turn token back too", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "0",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1",
    };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    for (const [request, status] of refusedTurns(id))
      expect((await call(limits, { ...request, key })).status).toBe(status);
    const turn = () =>
      call(limits, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: { content: "ok" } });
    expect((await turn()).status).toBe(200);
    expect((await turn()).status).toBe(429);
  });

  it("still take a request token each", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "3", TURN_RATE_LIMIT_PER_MINUTE: "2" };
    const key = await newTenant();
    // Created outside these limits (the pool's are off), so it takes none of the three.
    const conv = await createConversation(undefined, key);
    const [first, second] = refusedTurns(conv);
    expect((await call(limits, { ...first[0], key })).status).toBe(404);
    expect((await call(limits, { ...second[0], key })).status).toBe(404);
    expect(
      (await call(limits, { method: "POST", path: `/v1/conversations/${conv}/messages`, key, body: { content: "ok" } }))
        .status,
    ).toBe(200);
    const over = await call(limits, { method: "GET", path: `/v1/conversations/${conv}`, key });
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/3 requests per minute/);
  });
});
