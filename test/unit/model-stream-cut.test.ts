// A streamed reply whose body ends before `message_stop` (a gateway or the network cut it, with no
// `error` event): the SDK clears its snapshot and finalMessage() throws its own error. The call is
// then an error inside the stream, like an `error` event: what streamed is kept, the input is
// metered, and it is retried. Driven through the real SDK client over a scripted fetch.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { runAgentTurn } from "../../agent/turn-loop";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";
import { messageStart, sse } from "./sse-script";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const WORDS = "the river bends west past the mill and the old stone bridge ".repeat(8);

const start = messageStart;
const textBlock = (text: string): [string, unknown][] => [
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["ping", { type: "ping" }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }],
];
const ending: [string, unknown][] = [
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  [
    "message_delta",
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 20 } },
  ],
  ["message_stop", { type: "message_stop" }],
];

async function turn(bodies: Response[]) {
  let calls = 0;
  const client = new Anthropic({
    apiKey: "test",
    maxRetries: 0,
    fetch: async () => {
      const body = bodies[calls++];
      if (!body) throw new Error("more model calls than scripted");
      return body;
    },
  });
  const saved: StoredMessage[] = [];
  let streamed = "";
  const outcome = await runAgentTurn(
    {
      turnId: "turn_1",
      client,
      registry: new ToolRegistry(),
      toolContext: {} as ToolContext,
      maxIterations: 5,
      contextWindowTokens: 100_000,
      model: SONNET,
      knownThinking: () => new Map(),
      buildRequest: (): ModelRequest => ({
        model: SONNET.id,
        max_tokens: 1000,
        system: [],
        tools: [],
        messages: [{ role: "user", content: "tell me about the river" }],
      }),
      persist: persistInto(saved),
      emit: (e) => {
        if (e.type === "delta") streamed += e.text;
      },
    },
    [{ type: "text", text: "tell me about the river" }],
  );
  return { outcome, saved, streamed, calls };
}

describe("a stream cut before message_stop", () => {
  it("keeps what streamed, meters the call's input, and is retried", async () => {
    const cut = sse([start(1200), ...textBlock(WORDS)]);
    const whole = sse([start(1300), ...textBlock("The river is calm."), ...ending]);
    const r = await turn([cut, whole]);
    expect(r.streamed.startsWith(WORDS)).toBe(true);
    const kept = r.saved.filter((m) => m.role === "assistant").map((m) => JSON.stringify(m.content));
    expect(kept.some((c) => c.includes("the river bends west"))).toBe(true);
    expect(kept.some((c) => c.includes("The river is calm."))).toBe(true);
    // Both calls' input is metered.
    expect(r.outcome.usage.input_tokens).toBe(2500);
    expect(r.outcome.stopReason).toBe("end_turn");
  });

  it("a stream cut every time ends the turn as an error naming it, with what streamed saved", async () => {
    const r = await turn([0, 1, 2, 3].map(() => sse([start(1200), ...textBlock(WORDS)])));
    expect(r.outcome.stopReason).toBe("error");
    expect(r.outcome.failure?.message).toMatch(/stream ended before message_stop/);
    expect(r.saved.some((m) => m.role === "assistant" && JSON.stringify(m.content).includes("the river bends"))).toBe(
      true,
    );
    expect(r.outcome.usage.input_tokens).toBeGreaterThanOrEqual(1200);
  });
});
