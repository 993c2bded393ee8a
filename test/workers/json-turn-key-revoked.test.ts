// A key revoked while its JSON (non-SSE) turn runs gets none of the reply: the pending response is
// a 401 authentication_error with no messages, as its SSE stream would end, while the turn itself
// finishes in the conversation.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, newTenant, transcript } from "./helpers";

describe("a JSON turn whose key is revoked mid-turn", () => {
  it("answers 401 authentication_error without the reply; the turn still finishes", async () => {
    const owner = await newTenant();
    const other = (await api("POST", "/v1/keys", {}, { key: owner })).json as { apiKey: string; key: { id: string } };
    const id = await createConversation(undefined, owner);
    // About 40 deltas 300 ms apart: the turn runs for some 12 s.
    const pending = api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "Tell me about tides.\n@reply-chars 2000\n@stream-pace 300" },
      { key: other.apiKey },
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: owner })).status).toBe(200);
    const res = await pending;
    expect(res.status, res.text.slice(0, 300)).toBe(401);
    expect(res.json.error?.type).toBe("authentication_error");
    expect(res.text).not.toContain("tides");
    expect(res.json).not.toHaveProperty("messages");
    // The turn ran to its end in the conversation.
    const saved = await eventually(async () => {
      const messages = await transcript(id, owner);
      return messages.some((m) => m.role === "assistant") ? messages : null;
    }, 30_000);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant"]);
  }, 60_000);

  it("answers the reply when the key is still active", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const res = await api("POST", `/v1/conversations/${id}/messages`, { content: "hello" }, { key });
    expect(res.status).toBe(200);
    expect(res.json.messages?.length).toBeGreaterThan(0);
  });
});
