// A key revoked while its SSE turn streams hears no more of the conversation: within the recheck
// interval the stream ends with an `authentication_error` (as a socket of that key is closed),
// while the turn itself runs on to its end in the conversation.
import { describe, expect, it } from "vitest";
import { SSE_KEY_RECHECK_MS } from "../../workers/chat/turn-response";
import { api, createConversation, eventually, newTenant, transcript, worker } from "./helpers";

describe("an SSE turn whose key is revoked", () => {
  it("ends its stream with authentication_error within the recheck interval; the turn still finishes", async () => {
    const owner = await newTenant();
    const other = (await api("POST", "/v1/keys", {}, { key: owner })).json as { apiKey: string; key: { id: string } };
    const id = await createConversation(undefined, owner);
    const res = await worker().fetch(
      new Request(`http://chat.test/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${other.apiKey}`,
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        // About 40 deltas 300 ms apart: the reply streams for some 12 s.
        body: JSON.stringify({ content: "Tell me about tides.\n@reply-chars 2000\n@stream-pace 300" }),
      }),
    );
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: delta")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect((await api("DELETE", `/v1/keys/${other.key.id}`, undefined, { key: owner })).status).toBe(200);
    let after = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      after += decoder.decode(value, { stream: true });
    }
    // The stream ended at a recheck (every SSE_KEY_RECHECK_MS), long before the turn's end.
    expect(SSE_KEY_RECHECK_MS).toBeLessThan(12_000);
    expect(after).not.toContain("event: turn_end");
    const last = after.trim().split("\n\n").at(-1)!;
    expect(last).toContain("event: error");
    expect(last).toContain('"type":"authentication_error"');
    // The turn runs on without its listener: its reply is saved.
    const saved = await eventually(async () => {
      const messages = await transcript(id, owner);
      return messages.some((m) => m.role === "assistant") ? messages : null;
    }, 30_000);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant"]);
  }, 60_000);
});
