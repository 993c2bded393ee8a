// The /replay view (buildModelRequest with `between`) is the next turn's first request without its
// new prompt: built from the same history, the two agree on every message before that prompt.
import { describe, expect, it } from "vitest";
import { buildModelRequest, type ReplayInput } from "../../core/replay";
import { CONTINUE_PROMPT } from "../../core/replay-rules";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock, StoredMessage, WireMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { storedMessage } from "../stored-messages";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

const msg = storedMessage;
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const NEW_PROMPT = "the new prompt";

const build = (history: StoredMessage[], between: boolean) => {
  const input: ReplayInput = {
    model: SONNET,
    conversationId: "conv_B",
    settings: { ...defaultSettings(), stubBatchChars: 0 },
    system: [{ type: "text", text: "sys" }],
    tools: [],
    history,
    between,
  };
  return buildModelRequest(input);
};

const withoutBreakpoints = (messages: WireMessage[]): WireMessage[] =>
  JSON.parse(JSON.stringify(messages, (k, v: unknown) => (k === "cache_control" ? undefined : v)));

/** The view, and the next request with its new prompt taken out again. */
function viewAndNext(history: StoredMessage[]) {
  const view = build(history, true);
  const next = build([...history, msg("user", [text(NEW_PROMPT)])], false);
  const sent = withoutBreakpoints(next.request.messages);
  const last = sent.at(-1)!;
  expect(last.content.at(-1)).toEqual(text(NEW_PROMPT));
  if (typeof last.content !== "string" && last.content.length > 1) last.content = last.content.slice(0, -1);
  else sent.pop();
  return { view, shown: withoutBreakpoints(view.request.messages), sent, next };
}

describe("the /replay view is the next request but for its new prompt", () => {
  it("ends on a cut-off reply with no continue prompt", () => {
    for (const stop of ["max_tokens", "error", "model_context_window_exceeded"]) {
      const h = [msg("user", [text("write")]), msg("assistant", [text("Once upon")], stop)];
      const { shown, sent } = viewAndNext(h);
      expect(JSON.stringify(shown)).not.toContain(CONTINUE_PROMPT);
      expect(shown).toEqual(sent);
    }
  });

  it("counts the new prompt when aging results into stubs", () => {
    const use: ContentBlock = { type: "tool_use", id: "toolu_1", name: "conversation_read", input: { from_seq: 1 } };
    const big: ContentBlock = { type: "tool_result", tool_use_id: "toolu_1", content: "r".repeat(6000) };
    const h = [
      msg("user", [text("read it")]),
      msg("assistant", [use], "tool_use"),
      msg("user", [big]),
      msg("assistant", [text("read")], "end_turn"),
      msg("user", [text("turn A")]),
      msg("assistant", [text("ok")], "end_turn"),
    ];
    const { view, shown, sent, next } = viewAndNext(h);
    expect(JSON.stringify(sent)).toContain("[stale tool result replaced by this stub:");
    expect(shown).toEqual(sent);
    expect(view.estimate.stubbedResults).toBe(1);
    expect(view.estimate.stubbedResults).toBe(next.estimate.stubbedResults);
    expect(view.estimate.stubPendingChars).toBe(next.estimate.stubPendingChars);
  });

  it("drops a server call at the end that waits for no result any more", () => {
    const use: ContentBlock = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } };
    const h = [msg("user", [text("search")]), msg("assistant", [use, text("looking")], "pause_turn")];
    const { shown, sent } = viewAndNext(h);
    expect(shown.at(-1)).toEqual({ role: "assistant", content: [text("looking")] });
    expect(shown).toEqual(sent);
  });

  it("shows a turn waiting on client tools as it is: their results come next, not a prompt", () => {
    const use: ContentBlock = { type: "tool_use", id: "toolu_c", name: "get_weather", input: { city: "Paris" } };
    const h = [msg("user", [text("weather?")]), msg("assistant", [use], "tool_use")];
    expect(build(h, true).request).toEqual(build(h, false).request);
  });
});
