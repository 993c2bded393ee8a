// A call a stop answers as interrupted is told as every call and every platform result is: its
// tool_use event (once), then its tool_result event, whichever way the stop reached it. Driven
// through runAgentTurn with a scripted provider.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { clientToolDefinition } from "../../agent/tools/client-tool";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { runAgentTurn, type TurnDeps } from "../../agent/turn-loop";
import type { TurnEvent } from "../../core/events";
import { INTERRUPTED_TOOL_RESULT } from "../../core/replay";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const use = (id: string, name: string): ContentBlock => ({ type: "tool_use", id, name, input: { q: id } });

/** One scripted tool_use reply; `onReply` runs as it is delivered (a stop landing then). */
function oneReply(content: ContentBlock[], onReply: () => void = () => undefined) {
  const client = {
    messages: {
      stream() {
        const message = {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "scripted",
          content,
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
        return {
          on: () => undefined,
          finalMessage: async () => {
            onReply();
            return message;
          },
        };
      },
    },
  };
  return client as unknown as Anthropic;
}

function turn(client: Anthropic, stop: AbortController, onEcho: () => void = () => undefined) {
  const saved: StoredMessage[] = [];
  const events: TurnEvent[] = [];
  const registry = new ToolRegistry()
    .register({
      name: "echo",
      description: "echo",
      capability: "echo",
      core: true,
      input: z.object({ q: z.string() }),
      run: async ({ q }) => {
        onEcho();
        return { content: `echo ${q}` };
      },
    })
    .register(
      clientToolDefinition(
        { name: "pick", description: "pick on the client", input_schema: { type: "object" } },
        { core: true },
      ),
    );
  const deps: TurnDeps = {
    turnId: "turn_1",
    client,
    registry,
    toolContext: { activeTools: [] } as unknown as ToolContext,
    maxIterations: 10,
    contextWindowTokens: 100_000,
    model: SONNET,
    knownThinking: () => new Map(),
    buildRequest: (): ModelRequest => ({
      model: "scripted",
      max_tokens: 100,
      system: [],
      tools: [],
      messages: [{ role: "user", content: "go" }],
    }),
    persist: persistInto(saved),
    emit: (e) => events.push(e),
    pauseForClient: true,
    signal: stop.signal,
  };
  return { saved, events, run: () => runAgentTurn(deps, [{ type: "text", text: "go" }]) };
}

/** The tool events as [type, call id, is_error] in the order they were sent. */
const told = (events: TurnEvent[]) =>
  events.flatMap((e) =>
    e.type === "tool_use"
      ? [["tool_use", e.id]]
      : e.type === "tool_result"
        ? [["tool_result", e.tool_use_id, e.is_error, e.chars, e.preview]]
        : [],
  );
const interrupted = (id: string) => ["tool_result", id, true, INTERRUPTED_TOOL_RESULT.length, INTERRUPTED_TOOL_RESULT];

describe("calls a stop answers as interrupted", () => {
  it("stopped as the reply arrived, before any call ran: each call told by tool_use and tool_result", async () => {
    const stop = new AbortController();
    const t = turn(
      oneReply([use("t1", "echo"), use("t2", "pick")], () => stop.abort()),
      stop,
    );
    expect((await t.run()).stopReason).toBe("interrupted");
    const results = t.saved.at(-1)!.content;
    expect(results.map((b) => b.type === "tool_result" && b.tool_use_id)).toEqual(["t1", "t2"]);
    expect(told(t.events)).toEqual([["tool_use", "t1"], interrupted("t1"), ["tool_use", "t2"], interrupted("t2")]);
  });

  it("stopped while a call ran: a client call left waiting and a later call are each told once, then interrupted", async () => {
    const stop = new AbortController();
    const t = turn(oneReply([use("t1", "pick"), use("t2", "echo"), use("t3", "pick")]), stop, () => stop.abort());
    expect((await t.run()).stopReason).toBe("interrupted");
    expect(
      t.saved.at(-1)!.content.map((b) => b.type === "tool_result" && [b.tool_use_id, b.is_error ?? false]),
    ).toEqual([
      ["t1", true],
      ["t2", false],
      ["t3", true],
    ]);
    expect(told(t.events)).toEqual([
      ["tool_use", "t1"],
      ["tool_use", "t2"],
      ["tool_result", "t2", false, 7, "echo t2"],
      ["tool_use", "t3"],
      interrupted("t3"),
      interrupted("t1"),
    ]);
  });
});
