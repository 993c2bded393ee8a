// A user message that answers a step's tool calls and asks on in the same message (results first,
// then text: an imported Anthropic transcript's shape) continues the turn the calls belong to; it
// opens none. A refused turn around it is left out from its real prompt, so the replay never keeps
// a call whose result went with the refusal (the call would go back answered by a made-up "no
// result", the real one lost).
import { describe, expect, it } from "vitest";
import { buildModelRequest, INTERRUPTED_TOOL_RESULT } from "../../core/replay";
import { isPrompt, refusedTurns } from "../../core/replay-rules";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { storedMessage as msg } from "../stored-messages";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const call = (id: string): ContentBlock => ({ type: "tool_use", id, name: "lookup", input: {} });
const result = (id: string): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: `RESULT of ${id}` });

const refusedAfterMixed = () => [
  msg("user", [text("PROMPT-A look something up")]),
  msg("assistant", [text("Looking."), call("call_0")], "tool_use"),
  msg("user", [result("call_0"), text("MIXED and now the forbidden thing")]),
  msg("assistant", [text("I can't help with that.")], "refusal"),
  msg("user", [text("NEXT what is 2+2?")]),
];

describe("a user message holding tool results and then text", () => {
  it("is no prompt", () => {
    expect(isPrompt({ role: "user", content: [result("call_0"), text("and now?")] })).toBe(false);
    expect(isPrompt({ role: "user", content: [text("and now?")] })).toBe(true);
  });

  it("a refused turn around it goes from its real prompt, never splitting a call from its result", () => {
    const history = refusedAfterMixed();
    expect([...refusedTurns(history)].sort()).toEqual([0, 1, 2, 3]);
    const body = JSON.stringify(
      buildModelRequest({
        model: SONNET,
        conversationId: "conv_1",
        settings: defaultSettings(),
        system: [],
        tools: [],
        history,
      }).request.messages,
    );
    expect(body).not.toContain(INTERRUPTED_TOOL_RESULT);
    expect(body).not.toContain("call_0");
    expect(body).not.toContain("forbidden thing");
    expect(body).toContain("NEXT what is 2+2?");
  });
});
