// Workflow mode under the turn's bound: a sub-agent's model calls count against the turn's
// `maxToolIterations` together with the master's, so delegating (several tasks in one step, step
// after step) never lets a turn make more model calls than the setting allows.
import { describe, expect, it } from "vitest";
import { createConversation, send, transcript, type TranscriptMessage } from "./helpers";
import { resultText, toolResults } from "../blocks";

const delegate = (name: string, task: string) => `@tool agent_delegate ${JSON.stringify({ name, task })}`;

/** A sub-agent task that takes `steps` tool steps, one model call each, then a final answer. */
const stepsTask = (id: string, steps: number) =>
  [
    "Read the first message a few times and report it.",
    "@tools-per-step 1",
    ...Array.from(
      { length: steps },
      () => `@tool conversation_read {"conversation_id":"${id}","from_seq":1,"to_seq":1}`,
    ),
  ].join("\n");

/** Model calls that answered, the sub-agents' included: every one saves an assistant message with its usage. */
const modelCalls = (messages: TranscriptMessage[]) => messages.filter((m) => m.role === "assistant" && m.usage);

/** A conversation with agent_delegate active and a bound of `bound` model calls per turn; the seq the next turn starts at. */
async function workspace(bound: number) {
  const id = await createConversation({ maxToolIterations: bound });
  expect((await send(id, `@tool tool_activate {"name":"agent_delegate"}`)).status).toBe(200);
  const from = (await transcript(id)).length;
  return { id, turn: async () => (await transcript(id)).slice(from) };
}

describe("delegations under the turn's maxToolIterations", () => {
  it("counts the sub-agents' model calls against the turn's bound", async () => {
    const { id, turn } = await workspace(4);
    // One master step delegates three tasks, each wanting five model calls: 16 calls unbounded.
    const tasks = ["a", "b", "c"].map((n) => delegate(n, stepsTask(id, 4))).join("\n");
    const r = await send(id, tasks);
    expect(r.status).toBe(200);
    const messages = await turn();
    const calls = modelCalls(messages);
    expect(
      calls.length,
      JSON.stringify(calls.map((m) => [m.agent?.name ?? "master", m.stopReason])),
    ).toBeLessThanOrEqual(4);
    // The master's first step, then three calls left: the first sub-agent takes them all.
    expect(calls.filter((m) => !m.agent)).toHaveLength(1);
    expect(calls.filter((m) => m.agent?.name === "a")).toHaveLength(3);
    // The master ends at the bound as before.
    expect(r.json.stop_reason).toBe("max_iterations");
    const results = toolResults(messages.filter((m) => !m.agent));
    expect(results).toHaveLength(3);
    // The first run stopped when the turn's calls ran out; the others were never run.
    expect(results[0].is_error).toBe(true);
    expect(resultText(results[0])).toMatch(
      /^agent a stopped after 3 model calls without finishing: the turn used its bound of 4 model calls \(the maxToolIterations setting\)/,
    );
    for (const b of results.slice(1)) {
      expect(b.is_error).toBe(true);
      expect(resultText(b)).toMatch(
        /^not run: this turn has used its bound of 4 model calls \(the maxToolIterations setting\)/,
      );
    }
    expect(messages.some((m) => m.agent?.name === "b" || m.agent?.name === "c")).toBe(false);
  });

  it("leaves the master its own steps when the sub-agents finish within what is left", async () => {
    const { id, turn } = await workspace(6);
    // Step 1 delegates two tasks of two calls each (4 calls); step 2 is the master's answer: 6 in all.
    const r = await send(id, ["x", "y"].map((n) => delegate(n, stepsTask(id, 1))).join("\n"));
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const messages = await turn();
    expect(modelCalls(messages)).toHaveLength(6);
    const results = toolResults(messages.filter((m) => !m.agent));
    expect(results.map((b) => b.is_error)).toEqual([undefined, undefined]);
  });

  it("gives a sub-agent at most 12 calls even when the turn has more left", async () => {
    const { id, turn } = await workspace(30);
    const r = await send(id, delegate("long", stepsTask(id, 14)));
    expect(r.status).toBe(200);
    const messages = await turn();
    expect(modelCalls(messages).filter((m) => m.agent)).toHaveLength(12);
    const [result] = toolResults(messages.filter((m) => !m.agent));
    expect(resultText(result!)).toMatch(/agent long used its 12 model calls without finishing/);
  });
});
