// An import takes a turn token as a turn does (docs/api-notes.md, Rate limits): it starts the title
// and fold calls a turn would, so a key at its turn limit cannot go on importing history for the
// model to read. An import refused before it creates anything gives its turn tokens back.
import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { createConversation, newTenant } from "./helpers";

const transcript = {
  messages: [
    { role: "user", content: "hello" },
    { role: "assistant", content: "hi" },
  ],
};
const exchange = {
  messages: [
    { role: "user", text: "later" },
    { role: "assistant", text: "noted" },
  ],
};

describe("imports and the turn limits", () => {
  it("a new import and an import into a conversation each take one of the key's turn tokens", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "2" };
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const fresh = await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript });
    expect(fresh.status).toBe(201);
    const into = await callWith(limits, {
      method: "POST",
      path: `/v1/conversations/${id}/import`,
      key,
      body: exchange,
    });
    expect(into.status).toBe(201);
    const over = await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript });
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/2 turns per minute/);
    const turn = { content: "hi" };
    expect(
      (await callWith(limits, { method: "POST", path: `/v1/conversations/${id}/messages`, key, body: turn })).status,
    ).toBe(429);
  });

  it("the tenant's bucket counts imports from all its keys", async () => {
    const limits = {
      RATE_LIMIT_PER_MINUTE: "0",
      TURN_RATE_LIMIT_PER_MINUTE: "0",
      TENANT_TURN_RATE_LIMIT_PER_MINUTE: "1",
    };
    const key = await newTenant();
    expect(
      (await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript })).status,
    ).toBe(201);
    const over = await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript });
    expect(over.status).toBe(429);
    expect(over.json.error?.message).toMatch(/tenant is over its limit of 1 turns per minute/);
  });

  it("an import refused before it creates anything gives its turn token back", async () => {
    const limits = { RATE_LIMIT_PER_MINUTE: "0", TURN_RATE_LIMIT_PER_MINUTE: "1" };
    const key = await newTenant();
    const unknown = "conv_0000000000000000000000ZZZZ";
    const refused: [string, unknown, number][] = [
      ["/v1/conversations/import", { messages: [] }, 400],
      ["/v1/conversations/import", { messages: [{ role: "robot", content: "x" }] }, 400],
      [`/v1/conversations/${unknown}/import`, exchange, 404],
    ];
    for (const [path, body, status] of refused)
      expect((await callWith(limits, { method: "POST", path, key, body })).status, path).toBe(status);
    expect(
      (await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript })).status,
    ).toBe(201);
    expect(
      (await callWith(limits, { method: "POST", path: "/v1/conversations/import", key, body: transcript })).status,
    ).toBe(429);
  });
});
