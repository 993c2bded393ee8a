// A file uploaded while a turn waits on client tools has its note saved inside that turn, right
// after the step's results (prompt, tool_use, results, NOTE, reply). A fold must never cut before
// such a note: the tail would open on it, the question and its results folded away, and a
// regenerate would take the note for the last prompt.
import { describe, expect, it } from "vitest";
import { chooseFoldMark, foldCut, planFold, turnByTurnFoldLength } from "../../core/fold";
import type { ContentBlock, StoredMessage } from "../../core/types";

const NOTE = '<attachment id="att_01itinerary" name="itinerary.txt">\nday 1: Louvre\n</attachment>';

/** u = prompt, a = assistant text, t = assistant tool_use, r = tool results, n = an attachment's note. */
function conversation(spec: string): StoredMessage[] {
  return spec.split("").map((k, i) => {
    const seq = i + 1;
    const blocks: Record<string, ContentBlock[]> = {
      u: [{ type: "text", text: `question ${seq}` }],
      a: [{ type: "text", text: `answer ${seq}` }],
      t: [{ type: "tool_use", id: `tu${seq}`, name: "get_weather", input: {} }],
      r: [{ type: "tool_result", tool_use_id: `tu${seq - 1}`, content: `result ${seq}` }],
      n: [{ type: "text", text: NOTE }],
    };
    return {
      id: `msg_${seq}`,
      seq,
      role: k === "a" || k === "t" ? "assistant" : "user",
      content: blocks[k],
      createdAt: "2026-01-01T00:00:00Z",
    };
  });
}

/** Whether the fold may end before index `i` as the docs promise: a prompt, or a note between turns. */
const opensTurn = (region: readonly StoredMessage[], i: number) =>
  region[i].role === "user" &&
  region[i].content.every((b) => b.type === "text") &&
  !(region[i].content[0].type === "text" && region[i].content[0].text === NOTE && region[i - 1].role === "user");

describe("a fold around an upload's note inside a paused turn", () => {
  const paused = conversation("uauauautrna"); // the note at index 9, after the step's results

  it("keeps the tail on the turn's prompt, not on the note", () => {
    // Two kept messages would start the tail on the note: the mark walks back to the prompt.
    expect(chooseFoldMark(paused, 2)).toBe(6);
    expect(chooseFoldMark(conversation("uauauautrnna"), 2)).toBe(6); // two notes in the pause
  });

  it("still cuts before a note uploaded between turns (it rides with the prompt after it)", () => {
    const between = conversation("uauauanua");
    expect(chooseFoldMark(between, 3)).toBe(6);
  });

  it("never ends a fold's region or a budget-cut fold on the note", () => {
    const long = conversation("uauauautrnauaua");
    for (let threshold = 0; threshold < 200; threshold += 5)
      for (const tail of [1, 2, 3]) {
        const length = turnByTurnFoldLength(long, tail, threshold);
        if (length < long.length) expect(opensTurn(long, length), `threshold ${threshold} tail ${tail}`).toBe(true);
      }
    // The excerpts showed the messages before the note only: the fold ends before the prompt.
    expect(foldCut(long, 11, 9)).toBe(6);
    for (let budget = 100; budget < 1_000; budget += 20) {
      const plan = planFold(long, 2, budget);
      if (plan) expect(opensTurn(long, plan.cut), `budget ${budget}`).toBe(true);
    }
  });

  it("never marks before a note whose previous message is a user message", () => {
    for (const spec of ["uautrnauautrna", "utrnautrnnauauau", "uauautrtrnauautrna", "uanuautrnaua"]) {
      const region = conversation(spec);
      for (let tail = 1; tail < region.length; tail++) {
        const mark = chooseFoldMark(region, tail);
        if (mark !== null) expect(opensTurn(region, mark), `${spec} tail ${tail}`).toBe(true);
      }
    }
  });
});
