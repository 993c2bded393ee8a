// The agent loop of one turn: call the model (streaming), run the tools it asks for, feed the
// results back, until it stops or the iteration bound is reached. Each step is persisted as it
// completes, so a failure later in the turn never loses what came before.
import type Anthropic from "@anthropic-ai/sdk";
import { coalesceBlocks } from "../../../core/coalesce";
import type { TurnEvent } from "../../../core/events";
import { toolResultText } from "../../../core/render";
import type { ContentBlock, ModelRequest, NewMessage, StoredMessage, ToolResultBlock, Usage } from "../../../core/types";
import { addUsage, zeroUsage } from "../../../core/types";
import type { ToolContext, ToolRegistry } from "../tools/registry";
import { describeModelError, type ModelFailure } from "./model-errors";

export interface TurnDeps {
  turnId: string;
  client: Anthropic;
  registry: ToolRegistry;
  toolContext: ToolContext;
  maxIterations: number;
  /** The full request for the next model call, assembled from the freshest stored state. */
  buildRequest(): ModelRequest;
  /** Appends messages to the conversation (R2, then the DO index) and returns them as stored. */
  persist(messages: NewMessage[]): Promise<StoredMessage[]>;
  emit(event: TurnEvent): void;
}

export interface TurnOutcome {
  stopReason: string;
  usage: Usage;
  modelMs: number;
  failure?: ModelFailure;
}

const PREVIEW_CHARS = 200;

export async function runAgentTurn(deps: TurnDeps, userContent: ContentBlock[]): Promise<TurnOutcome> {
  const { turnId, emit } = deps;
  await deps.persist([{ role: "user", content: userContent }]);
  let usage = zeroUsage();
  let modelMs = 0;

  for (let step = 0; step < deps.maxIterations; step++) {
    const request = deps.buildRequest();
    const started = Date.now();
    let reply: Anthropic.Message;
    try {
      const stream = deps.client.messages.stream(request as unknown as Anthropic.MessageStreamParams);
      stream.on("text", (text) => emit({ type: "delta", turnId, text }));
      reply = await stream.finalMessage();
    } catch (err) {
      modelMs += Date.now() - started;
      return { stopReason: "error", usage, modelMs, failure: describeModelError(err) };
    }
    modelMs += Date.now() - started;
    usage = addUsage(usage, reply.usage as Partial<Usage>);

    const content = coalesceBlocks(keepKnownBlocks(reply.content));
    if (content.length) {
      await deps.persist([
        { role: "assistant", content, usage: pickUsage(reply.usage), model: reply.model, stopReason: reply.stop_reason },
      ]);
    }
    const calls = content.filter((b): b is Extract<ContentBlock, { type: "tool_use" }> => b.type === "tool_use");
    if (reply.stop_reason !== "tool_use" || !calls.length) return { stopReason: reply.stop_reason ?? "end_turn", usage, modelMs };

    const results: ToolResultBlock[] = [];
    for (const call of calls) {
      emit({ type: "tool_use", turnId, id: call.id, name: call.name, input: call.input });
      const out = await deps.registry.run(call.name, call.input, { ...deps.toolContext, progress: (message) => emit({ type: "progress", turnId, message }) });
      const block: ToolResultBlock = { type: "tool_result", tool_use_id: call.id, content: out.blocks ?? out.content, ...(out.isError ? { is_error: true } : {}) };
      const text = toolResultText(block);
      emit({ type: "tool_result", turnId, tool_use_id: call.id, name: call.name, is_error: !!out.isError, chars: text.length, preview: text.slice(0, PREVIEW_CHARS) });
      results.push(block);
    }
    await deps.persist([{ role: "user", content: results }]);
  }
  return { stopReason: "max_iterations", usage, modelMs };
}

/** Only block types this platform stores and replays; anything else from the provider is dropped. */
function keepKnownBlocks(blocks: Anthropic.ContentBlock[]): ContentBlock[] {
  const out: ContentBlock[] = [];
  for (const b of blocks) {
    if (b.type === "text") out.push({ type: "text", text: b.text });
    else if (b.type === "tool_use") out.push({ type: "tool_use", id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> });
  }
  return out;
}

function pickUsage(u: Anthropic.Usage): Usage {
  return {
    input_tokens: u.input_tokens ?? 0,
    output_tokens: u.output_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
  };
}
