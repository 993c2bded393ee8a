// One step's tool calls: each runs here (or, for a client tool, is left for the client while the
// turn pauses), its result in call order. Server tools (web search, web fetch) never appear here:
// the API runs them inside the model call.
import { readableToolContent } from "../core/blank-text";
import { MAX_RESULTS_PER_POST } from "../core/client-tools";
import { toolResultText } from "../core/render";
import { INTERRUPTED_TOOL_RESULT } from "../core/replay";
import { type ContentBlock, type ModelRequest, type ToolResultBlock, zeroUsage } from "../core/types";
import { runsOnClient } from "./tools/client-tool";
import type { DelegatedRun, TurnDeps } from "./turn-deps";

/** The result of a client call past the MAX_RESULTS_PER_POST a step may leave to its client. */
export const TOO_MANY_CLIENT_CALLS = `not run: one step may leave at most ${MAX_RESULTS_PER_POST} calls to the client; make this call again in the next step`;

/** A client tool call the turn waits on. */
export interface PendingCall {
  id: string;
  name: string;
  input: unknown;
}

const PREVIEW_CHARS = 200;

/** Every result of the step in call order, null where a client owes it, and the calls it owes. */
export async function runToolStep(
  deps: TurnDeps,
  step: {
    content: readonly ContentBlock[];
    request: ModelRequest;
    /** A delegated run's usage and model time, once: when it returns, or the usage it had before it failed. */
    onDelegated: (run: Pick<DelegatedRun, "usage" | "modelMs">) => void;
  },
): Promise<{ results: Array<ToolResultBlock | null>; pending: PendingCall[] }> {
  const { content, request, onDelegated } = step;
  const { turnId, emit } = deps;
  const calls = content.filter((b): b is Extract<ContentBlock, { type: "tool_use" }> => b.type === "tool_use");
  const results: Array<ToolResultBlock | null> = [];
  const pending: PendingCall[] = [];
  const progress = (message: string) => emit({ type: "progress", turnId, message });
  for (const call of calls) {
    if (deps.signal?.aborted) {
      // Stopped: no further call runs (nor waits for the client); each is answered as interrupted.
      results.push(interruptedCall(deps, call));
      continue;
    }
    emit({
      type: "tool_use",
      turnId,
      id: call.id,
      name: call.name,
      input: deps.registry.withhold(call.name, call.input),
    });
    const tool = deps.registry.get(call.name);
    if (runsOnClient(tool) && deps.pauseForClient && !deps.registry.refusal(call.name, deps.toolContext.activeTools)) {
      // Past what one post of results can carry, a call is answered now: the step stays answerable.
      if (pending.length >= MAX_RESULTS_PER_POST) {
        results.push(toldResult(deps, call, errorResult(call.id, TOO_MANY_CLIENT_CALLS)));
        continue;
      }
      // The client runs it; the server calls of the same step still run now.
      pending.push({ id: call.id, name: call.name, input: call.input });
      results.push(null);
      continue;
    }
    // Workflow mode: a delegated run saves its own thread (agent-tagged, never replayed here)
    // and counts towards this turn's usage and model time; a run that fails (its tool result an
    // error) still counts what its calls spent.
    const delegate = deps.delegate
      ? async (task: string, name: string) => {
          let spent = zeroUsage();
          let run: DelegatedRun;
          try {
            run = await deps.delegate!(
              { name, task, toolUseId: call.id },
              {
                turnId,
                request,
                emit,
                signal: deps.signal,
                onUsage: (usage) => {
                  spent = usage;
                },
              },
            );
          } catch (err) {
            // Its model time is not known; its usage is.
            onDelegated({ usage: spent, modelMs: 0 });
            throw err;
          }
          onDelegated(run);
          return run.output;
        }
      : undefined;
    const out = await deps.registry.run(call.name, call.input, {
      ...deps.toolContext,
      progress,
      delegate,
      turnId,
      callId: call.id,
    });
    // Blank output (an HTTP tool's empty body, an MCP tool's empty text) is stored as words the
    // model can read: the Messages API refuses blank text, and the result replays on every request.
    const block: ToolResultBlock = {
      type: "tool_result",
      tool_use_id: call.id,
      content: readableToolContent(out.blocks ?? out.content),
      ...(out.isError ? { is_error: true } : {}),
    };
    results.push(toldResult(deps, call, block));
  }
  if (deps.signal?.aborted) {
    // A stop during the step leaves nothing waiting for the client: its calls are interrupted too
    // (their tool_use events already sent).
    return { results: results.map((r, i) => r ?? interruptedCall(deps, calls[i], { announced: true })), pending: [] };
  }
  return { results, pending };
}

/**
 * A call answered before it ran (a stop: interrupted; a reply cut at max_tokens: `content` says it
 * was not run), told as every call is (its tool_use event, unless `announced` already) and as every
 * platform result is (a tool_result event).
 */
export function interruptedCall(
  deps: Pick<TurnDeps, "turnId" | "emit" | "registry">,
  call: { id: string; name: string; input: unknown },
  opts: { announced?: boolean; content?: string } = {},
): ToolResultBlock {
  const { turnId, emit } = deps;
  const content = opts.content ?? INTERRUPTED_TOOL_RESULT;
  if (!opts.announced)
    emit({
      type: "tool_use",
      turnId,
      id: call.id,
      name: call.name,
      input: deps.registry.withhold(call.name, call.input),
    });
  return toldResult(deps, call, errorResult(call.id, content));
}

/** A result the platform gives for a call (the call never ran, or never can): an error, `content` saying why. */
export const errorResult = (id: string, content: string): ToolResultBlock => ({
  type: "tool_result",
  tool_use_id: id,
  content,
  is_error: true,
});

/** `block`, the result of `call`, told by its tool_result event (its size and the head of its text). */
export function toldResult(
  deps: Pick<TurnDeps, "turnId" | "emit">,
  call: { id: string; name: string },
  block: ToolResultBlock,
): ToolResultBlock {
  const text = toolResultText(block);
  deps.emit({
    type: "tool_result",
    turnId: deps.turnId,
    tool_use_id: call.id,
    name: call.name,
    is_error: !!block.is_error,
    chars: text.length,
    preview: text.slice(0, PREVIEW_CHARS),
  });
  return block;
}
