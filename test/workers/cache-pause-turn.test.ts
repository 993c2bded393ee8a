// A reply paused at `pause_turn` is sent back as the last message of the next request. That request
// reads from the cache everything the paused one wrote: its breakpoint on the request before's last
// message (the user message) holds even when the paused reply carries more than the API's 20-block
// lookback (a server call and its result per search or fetch).
import { describe, expect, it } from "vitest";
import { createConversation, send, turnMessages } from "./helpers";

describe("the request resending a paused reply", () => {
  it("reads the prefix the paused request wrote, past a 21-block paused reply", { timeout: 120_000 }, async () => {
    const id = await createConversation({ serverTools: ["web_search", "web_fetch"] });
    await send(id, `warm up: ${"some words of context. ".repeat(200)}`);
    const lines = [
      ...Array.from({ length: 5 }, (_, i) => `@web-search tide tables ${i}`),
      ...Array.from({ length: 5 }, (_, i) => `@web-fetch https://example.com/page${i}`),
    ];
    const r = await send(id, ["find the tide tables", ...lines, "@stop pause_turn"].join("\n"));
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const [paused, resumed] = turnMessages(r).filter((m) => m.role === "assistant");
    expect(paused.stopReason).toBe("pause_turn");
    expect(paused.content.length).toBeGreaterThan(20);
    const usage = paused.usage;
    const resumedUsage = resumed.usage;
    if (!usage || !resumedUsage) throw new Error("replies carry no usage");
    const pausedPrefix = usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    expect(resumedUsage.cache_read_input_tokens).toBeGreaterThanOrEqual(pausedPrefix);
  });
});
