// An image block in an assistant message is refused by the API on every request that carries it.
// An import took one before 2026-12-06 (it refuses them now): such a stored message replays with a
// text placeholder in the image's place, so the conversation's later turns are not refused.
import { describe, expect, it } from "vitest";
import { toWireMessages } from "../../core/replay";
import type { ContentBlock } from "../../core/types";
import { storedMessage as msg } from "../stored-messages";
import { postOnFixtureDay } from "./offline-model-client";

const image: ContentBlock = { type: "image", source: { type: "url", url: "https://example.com/a.png" } };

describe("an assistant message holding an image", () => {
  it("replays the image as a text placeholder, and the request is one the API takes", async () => {
    const history = [
      msg("user", [{ type: "text", text: "Draw it." }]),
      msg("assistant", [image, { type: "text", text: "Here it is." }]),
      msg("user", [{ type: "text", text: "Describe it." }]),
    ];
    const wire = toWireMessages(history, 2);
    expect(wire[1]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "[image]" },
        { type: "text", text: "Here it is." },
      ],
    });
    const res = await postOnFixtureDay({ model: "claude-sonnet-5-5", max_tokens: 1024, messages: wire });
    expect(res.status).toBe(200);
  });

  it("keeps a user message's image as it is", () => {
    const history = [msg("user", [image, { type: "text", text: "What is this?" }])];
    expect(toWireMessages(history)[0].content).toEqual([image, { type: "text", text: "What is this?" }]);
  });
});
