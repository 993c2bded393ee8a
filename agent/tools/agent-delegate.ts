// agent_delegate (workflow mode): hands a self-contained task to a sub-agent. The turn loop
// supplies `ctx.delegate`; the run itself lives in ../agent/sub-agent.ts.
import { z } from "zod";
import type { DelegateAccess, ToolDefinition } from "./registry";

export const agentDelegate: ToolDefinition<{ task: string; name: string }, DelegateAccess> = {
  name: "agent_delegate",
  core: false,
  capability: "agent_delegate: hand a self-contained task to a sub-agent and get back only its result",
  description:
    "Delegate a self-contained task (e.g. reading a long set of files and reporting figures) to a sub-agent with the same tools. It works on its own thread, which is saved but never replayed to you; you receive only its final answer, with the conversation_read call that shows its steps.",
  input: z.strictObject({
    task: z
      .string()
      .trim()
      .min(1)
      .max(20_000)
      .describe("Everything the sub-agent needs to know: it sees nothing else of this conversation."),
    name: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .regex(/^[A-Za-z0-9 _-]+$/, "letters, digits, space, _ and - only")
      .default("agent")
      .describe("A short label for the sub-agent, shown in progress and kept on its messages."),
  }),
  async run({ task, name }, ctx) {
    if (!ctx.delegate)
      return {
        content: "agent_delegate runs only in the main agent's turn: a sub-agent cannot delegate further",
        isError: true,
      };
    return ctx.delegate(task, name);
  },
};
