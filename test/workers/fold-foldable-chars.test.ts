// What a fold now would fold (replay-cache.ts foldableChars) is exactly the chars before the fold
// mark: the kept tail, from the mark's own message on, is never counted. Counted one message short,
// the figure would run one message ahead and a fold would be sent a message early.
import { describe, expect, it } from "vitest";
import { messageChars } from "../../core/render";
import type { StoredMessage } from "../../core/types";
import { api, createConversation, send, transcript } from "./helpers";

/** Messages a fold keeps verbatim: with the turns below, the count alone lands inside a tool step. */
const TAIL = 6;
const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;

/** Where a fold may end: before a user message holding no tool result (core/fold.ts mayCutBefore). */
const opensTurn = (m: StoredMessage) => m.role === "user" && !m.content.some((b) => b.type === "tool_result");

describe("foldableChars", () => {
  it("is exactly the chars of the messages before the fold mark, the mark's own message in the kept tail", async () => {
    // No fold is sent at this threshold, so the boundary stays at the start and every message is unsummarized.
    const id = await createConversation({ foldThresholdChars: 50_000_000, tailMessages: TAIL });
    expect((await send(id, `the opening question\n@reply-chars 300`)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const r = await send(id, `look up topic-${i}\n@tool memory_search {"query":"topic-${i}"}`);
      expect(r.status).toBe(200);
    }
    const m = await meta(id);
    // The conversation's own setting, as the fold reads it.
    expect(m.settings.tailMessages).toBe(TAIL);
    const messages = await transcript(id);
    expect(messages.some((x) => x.superseded)).toBe(false);
    expect(m.unsummarizedChars).toBe(messages.reduce((n, x) => n + messageChars(x), 0));

    // Keep the last TAIL messages, then walk back to a message a turn opens with.
    let mark = messages.length - TAIL;
    // The tool steps put that count on a tool result, which may not open the kept tail: the walk back is exercised.
    expect(opensTurn(messages[mark])).toBe(false);
    while (mark > 0 && !opensTurn(messages[mark])) mark--;
    expect(mark).toBeGreaterThan(0);
    const before = messages.slice(0, mark).reduce((n, x) => n + messageChars(x), 0);
    // The mark's own message has chars, so counting from one past it would give a larger figure.
    expect(messageChars(messages[mark])).toBeGreaterThan(0);
    expect(m.foldableChars).toBe(before);
  });
});
