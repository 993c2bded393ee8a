// A sub-agent whose final reply carries no text: the API's empty end_turn after tool results (content
// [], never saved) or a reply of thinking only. Its answer is then the text it wrote last before it,
// marked as such; a thread with no text at all is reported as an agent that ended without an answer.
import { describe, expect, it } from "vitest";
import type { ContentBlock } from "../../core/types";
import { delegateScripted } from "./sub-agent-harness";

const runWith = (first: ContentBlock[], last: ContentBlock[]) =>
  delegateScripted(
    [
      { content: [...first, { type: "tool_use", id: "t1", name: "echo", input: { q: "note" } }], stop: "tool_use" },
      { content: last, stop: "end_turn", out: 3 },
    ],
    "Find the answer and save a note",
  );

const finals: Array<{ label: string; last: ContentBlock[] }> = [
  { label: "empty (content [])", last: [] },
  { label: "thinking only", last: [{ type: "thinking", thinking: "progress: saved the note", signature: "sig" }] },
];

describe("a sub-agent whose final reply has no text", () => {
  for (const { label, last } of finals) {
    it(`${label}: passes on its last words before it, marked`, async () => {
      const { run, requests } = await runWith([{ type: "text", text: "The answer is 42 (ids a1, a2)." }], last);
      expect(requests).toHaveLength(2);
      expect(run.output.isError).toBeFalsy();
      expect(run.output.content).toContain("[its final reply was empty; its last words before it:]");
      expect(run.output.content).toContain("The answer is 42 (ids a1, a2).");
      expect(run.output.content).toContain("conversation_read");
    });

    it(`${label}, and no text anywhere in its thread: an error saying it ended without an answer`, async () => {
      const { run } = await runWith([], last);
      expect(run.output.isError).toBe(true);
      expect(run.output.content).toContain("agent figures ended without an answer");
      expect(run.output.content).toContain("conversation_read");
    });
  }
});
