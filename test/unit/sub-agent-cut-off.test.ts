// A sub-agent whose reply is cut off (its output limit, the context window) after a complete tool
// call: the call is never run (a cut call's input may be incomplete) but answered at once as not
// run, with more output room for the next call, and the agent goes on to its answer (turn-loop.ts).
import { describe, expect, it } from "vitest";
import type { ToolResultBlock } from "../../core/types";
import { delegateScripted } from "./sub-agent-harness";

const runCutOff = (stop: string) =>
  delegateScripted(
    [
      {
        content: [
          { type: "text", text: "I will look up the two figures." },
          { type: "tool_use", id: "t1", name: "echo", input: { q: "first" } },
        ],
        stop,
      },
      { content: [{ type: "text", text: "The figures are 1 and 2." }], stop: "end_turn" },
    ],
    "Find both figures",
  );

describe("a sub-agent cut off after a complete tool call", () => {
  for (const stop of ["max_tokens", "model_context_window_exceeded"]) {
    it(`${stop}: answers the call as not run, goes on with more room, and reports its answer`, async () => {
      const { run, saved, requests, ran } = await runCutOff(stop);
      // Never run: its input may be incomplete.
      expect(ran).toEqual([]);
      // Answered at once, right after the cut reply, so the call never goes unanswered.
      const cut = saved.findIndex((m) => m.role === "assistant" && m.stopReason === stop);
      expect(cut).toBeGreaterThanOrEqual(0);
      const results = saved[cut + 1].content.filter((b): b is ToolResultBlock => b.type === "tool_result");
      expect(results).toEqual([
        expect.objectContaining({ tool_use_id: "t1", is_error: true, content: expect.stringContaining("cut off") }),
      ]);
      // The loop went on, with more output room, to the agent's answer.
      expect(requests).toHaveLength(2);
      expect(requests[1].max_tokens).toBeGreaterThan(requests[0].max_tokens);
      expect(run.output.isError).toBeFalsy();
      expect(run.output.content).toContain("The figures are 1 and 2.");
    });
  }
});
