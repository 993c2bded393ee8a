// The window fit weighs an earlier reply's thinking as the request sends it: an unknown block (not
// produced by the platform) never goes back, so it neither stubs nor hides a history that fits.
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createOfflineModelFetch } from "../../core/offline-model";
import { api, createConversation, eventually, inConversation, send } from "./helpers";

describe("the window fit and unknown thinking", () => {
  it("keeps a history that fits the window as sent, whatever thinking earlier replies stored", async () => {
    const id = await createConversation({ model: "offline-40k", thinking: "adaptive" });
    expect((await send(id, "hello")).status).toBe(200);
    // An earlier exchange whose reply thought at length (stored thinking is kept byte for byte; the
    // request never sends an earlier turn's thinking back).
    await inConversation(id, (i) =>
      i.record.append([
        { role: "user", content: [{ type: "text", text: "think hard about rivers" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "pondering rivers ".repeat(2_400), signature: "c2ln".repeat(50) },
            { type: "text", text: `RIVER-REPLY ${"the river runs long. ".repeat(300)}` },
          ],
        },
      ]),
    );
    const r = await send(id, "and lakes?");
    expect(r.status).toBe(200);
    const newest = ((await api("GET", `/v1/conversations/${id}/prompts`)).json.data as { id: number }[])[0];
    const body = await eventually(async () => {
      const x = await api("GET", `/v1/conversations/${id}/prompts/${newest.id}`);
      return x.status === 200 ? (x.json as { max_tokens: number; messages: unknown[] }) : null;
    });
    const { max_tokens: _m, ...req } = body;
    const count = await createOfflineModelFetch()(`${OFFLINE_BASE_URL}/v1/messages/count_tokens`, {
      method: "POST",
      body: JSON.stringify(req),
    });
    const sentTokens = ((await count.json()) as { input_tokens: number }).input_tokens;
    const sent = JSON.stringify(body.messages);
    expect(sentTokens).toBeLessThan(10_000); // far within the 40k window (30k budget)
    expect(sent, "the earlier exchange is sent, not a pointer").toContain("RIVER-REPLY");
    expect(sent).not.toContain("are not shown here: the request would not fit the context window");
  }, 120_000);
});
