// An image left out of a request for its limits (core/request-limits.ts) is named with the call
// that brings the original back: conversation_read of the stored result, when the request was
// built from stored history. Running the tool again would not do for a client's screenshot or an
// MCP tool: it shows what is there now, not what the result held.
import { describe, expect, it } from "vitest";
import { fitRequestLimits } from "../../core/request-limits";
import { toolResultLocator } from "../../core/request-placeholders";
import type { ContentBlock, ModelRequest, StoredMessage, WireMessage } from "../../core/types";
import { b64, imageBlock, pngHead } from "./image-bytes";

/** 21 screenshots from a client tool, each in a stored tool result of its own. */
function history(): StoredMessage[] {
  const shot = b64(pngHead(100, 100));
  return Array.from({ length: 21 }, (_, i): StoredMessage[] => [
    {
      id: `msg_u${i}`,
      seq: 4 * i + 1,
      role: "user",
      content: [{ type: "text", text: `look ${i}` }],
      createdAt: "2026-12-06T00:00:00Z",
    },
    {
      id: `msg_a${i}`,
      seq: 4 * i + 2,
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "take_screenshot", input: {} }],
      createdAt: "2026-12-06T00:00:00Z",
    },
    {
      id: `msg_r${i}`,
      seq: 4 * i + 3,
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: [imageBlock(shot) as never] }],
      createdAt: "2026-12-06T00:00:00Z",
    },
    {
      id: `msg_d${i}`,
      seq: 4 * i + 4,
      role: "assistant",
      content: [{ type: "text", text: `seen ${i}` }],
      createdAt: "2026-12-06T00:00:00Z",
    },
  ]).flat();
}

const request = (stored: StoredMessage[]): ModelRequest => ({
  model: "claude-sonnet-5-5",
  max_tokens: 1000,
  system: [{ type: "text", text: "You help." }],
  tools: [],
  messages: stored.map((m): WireMessage => ({ role: m.role, content: m.content as ContentBlock[] })),
});

const placeholderTexts = (r: ModelRequest) =>
  r.messages.flatMap((m) =>
    typeof m.content === "string"
      ? []
      : m.content.flatMap((b) =>
          b.type === "tool_result" && Array.isArray(b.content)
            ? b.content.flatMap((x) => (x.type === "text" && x.text.startsWith("[image left out") ? [x.text] : []))
            : [],
        ),
  );

describe("an image result left out for a request's limits", () => {
  it("names the conversation_read call of its stored result, not the tool again", () => {
    const stored = history();
    const out = fitRequestLimits(request(stored), 20, { conversationId: "conv_1", locate: toolResultLocator(stored) });
    const [first] = placeholderTexts(out.request);
    expect(first).toContain("returned by take_screenshot {}");
    expect(first).toContain(
      'conversation_read {"conversation_id":"conv_1","message_id":"msg_r0","block":0} returns it',
    );
    expect(first).not.toContain("again shows it");
  });

  it("without a stored history to locate it, still names the tool", () => {
    const out = fitRequestLimits(request(history()), 20);
    expect(placeholderTexts(out.request)[0]).toContain("calling take_screenshot {} again shows it");
  });
});
