// What the compactor's in-turn state call sends, caught by a client that records it: a turn of four
// reads whose oldest is large, so the pass cuts it and asks for the turn's state (a pass that cuts
// nothing makes no state call). Shared by the tests of what that request carries.
import type Anthropic from "@anthropic-ai/sdk";
import { TurnCompactor } from "../../agent/turn-compaction";
import type { CompactionBudget } from "../../core/compactor";
import type { ModelEntry } from "../../core/models/catalog";
import type { ModelRequest, StoredMessage } from "../../core/types";

/** The state call's requests (none for an empty turn) over a turn whose task is `task`. */
export async function stateCallRequests(opts: {
  entry: ModelEntry;
  /** The request's `model`. */
  model: string;
  task: string;
  turn: StoredMessage[];
}): Promise<Anthropic.MessageCreateParamsNonStreaming[]> {
  const sent: Anthropic.MessageCreateParamsNonStreaming[] = [];
  const client = {
    messages: {
      create: async (params: Anthropic.MessageCreateParamsNonStreaming) => {
        sent.push(params);
        return { content: [{ type: "text", text: "TASK:\n- the task\n\nREMAINING:\n- none" }] };
      },
    },
  } as unknown as Anthropic;
  const budget: CompactionBudget = {
    contextWindowTokens: 10_000,
    outputReserveTokens: 1_000,
    compactTriggerRatio: 0.8,
    compactTargetRatio: 0.5,
    charsPerToken: 4,
  };
  const compactor = new TurnCompactor(budget, client, opts.entry, () => () => undefined);
  const request: ModelRequest = {
    model: opts.model,
    max_tokens: 500,
    system: [{ type: "text", text: "sys" }],
    tools: [],
    messages: [{ role: "user", content: [{ type: "text", text: opts.task }] }],
  };
  for (const [i, size] of [20_000, 100, 100, 100].entries())
    request.messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: `toolu_${i}`, name: "ledger_read", input: { i } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: "r".repeat(size) }] },
    );
  await compactor.compact(request, opts.turn);
  return sent;
}
