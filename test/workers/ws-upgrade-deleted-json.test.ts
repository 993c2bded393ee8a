import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant, worker } from "./helpers";

describe("a websocket upgrade racing the conversation's DELETE", () => {
  it("is refused in the API's JSON error shape, never as plain text", async () => {
    const key = await newTenant();
    const refused: { status: number; type: string | null; body: string }[] = [];
    for (let i = 0; i < 30; i++) {
      const id = await createConversation(undefined, key);
      const upgrading = worker().fetch(
        new Request(`http://chat.test/v1/conversations/${id}/ws?after=0`, {
          headers: { authorization: `Bearer ${key}`, upgrade: "websocket" },
        }),
      );
      for (let y = 0; y < i % 5; y++) await Promise.resolve();
      const deleted = await api("DELETE", `/v1/conversations/${id}`, undefined, { key });
      expect(deleted.status).toBe(204);
      const res = await upgrading;
      if (res.status === 101) {
        res.webSocket?.accept();
        res.webSocket?.close();
        continue;
      }
      refused.push({ status: res.status, type: res.headers.get("content-type"), body: await res.text() });
    }
    for (const r of refused) {
      expect(r.type).toMatch(/^application\/json/);
      expect(JSON.parse(r.body)).toEqual({ error: { type: "not_found", message: "conversation not found" } });
      expect(r.status).toBe(404);
    }
    // The race is won by the DELETE at least once (today every time): the mapping is exercised.
    expect(refused.length).toBeGreaterThan(0);
  });
});
