// A stored tool call by a name over 200 characters (a model's call the registry answered as an
// unknown tool) replays with its name cut to 200 characters: the API refuses the whole name on every
// request that carries it (anthropics/claude-code#2673). The record keeps the name; the cut copy is
// the same bytes on every build and names the stored block it stands for.
import { describe, expect, it } from "vitest";
import { storedBlockOf, toWireMessages } from "../../core/replay";
import type { ContentBlock } from "../../core/types";
import { storedMessage as msg } from "../stored-messages";
import { postOnFixtureDay } from "./offline-model-client";

const call = (name: string): ContentBlock => ({ type: "tool_use", id: "toolu_1", name, input: {} });
const history = (name: string) => [
  msg("user", [{ type: "text", text: "Try it." }]),
  msg("assistant", [{ type: "text", text: "Calling it." }, call(name)]),
  msg("user", [{ type: "tool_result", tool_use_id: "toolu_1", content: `unknown tool "${name}"`, is_error: true }]),
  msg("assistant", [{ type: "text", text: "No such tool." }]),
  msg("user", [{ type: "text", text: "Hello again." }]),
];
const sentCall = (stored: ReturnType<typeof history>) => toWireMessages(stored)[1].content[1] as ContentBlock;

describe("a stored tool call by a name over 200 characters", () => {
  it("goes back with the name cut to 200 characters, the same bytes every time, and the API takes it", async () => {
    const stored = history("x".repeat(201));
    const sent = sentCall(stored);
    expect(sent).toEqual(call("x".repeat(200)));
    expect(storedBlockOf(sent)).toBe(stored[1].content[1]);
    expect((stored[1].content[1] as { name: string }).name).toHaveLength(201);
    expect(JSON.stringify(toWireMessages(stored))).toBe(JSON.stringify(toWireMessages(stored)));
    const res = await postOnFixtureDay({
      model: "claude-sonnet-5-5",
      max_tokens: 1024,
      messages: toWireMessages(stored),
    });
    expect(res.status).toBe(200);
  });

  it("counts characters as the API does and never splits a surrogate pair", () => {
    const name = "😀".repeat(201);
    expect((sentCall(history(name)) as { name: string }).name).toBe("😀".repeat(200));
    // 150 code points in 300 UTF-16 units: within the limit, sent as it is.
    const stored = history("😀".repeat(150));
    expect(sentCall(stored)).toBe(stored[1].content[1]);
  });

  it("leaves a name of 200 characters as it is", () => {
    const stored = history("x".repeat(200));
    expect(sentCall(stored)).toBe(stored[1].content[1]);
  });
});
