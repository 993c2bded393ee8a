// A streamed reply whose body ends after `message_delta` but before `message_stop`: per the
// streaming docs (https://platform.claude.com/docs/en/build-with-claude/streaming) message_delta
// carries the final stop_reason and the cumulative usage, and message_stop carries nothing more.
// With every block already closed by content_block_stop the reply is whole: it is the call's
// message, never retried (a retry pays again and repeats server-tool work such as a web search).
// A body cut with a block still open is still a cut stream, retried as before (the cut before
// message_delta: test/unit/model-stream-cut.test.ts). So is an `error` event in message_stop's
// place: after such a message_delta it is the whole reply too; before it, retried; after a Stop, a
// stop. Driven through the real SDK client over a scripted fetch.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { streamCall } from "../../agent/model-call";
import { isRetryableStreamError } from "../../agent/model-errors";
import { runAgentTurn } from "../../agent/turn-loop";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { catalogEntry } from "../../core/models/lookup";
import type { ModelRequest, StoredMessage } from "../../core/types";
import { persistInto } from "./turn-harness";
import { messageStart, sse, type SseEvent } from "./sse-script";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const REPLY = "The river bends west past the mill and runs under the old stone bridge.";

type Event = SseEvent;

const start = messageStart;
const textOpen = (text: string): Event[] => [
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["ping", { type: "ping" }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }],
];
const blockStop: Event = ["content_block_stop", { type: "content_block_stop", index: 0 }];
/** The final counts, differing from message_start's so the test sees which were kept. */
const delta = (stopReason: string): Event => [
  "message_delta",
  {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { input_tokens: 1200, cache_creation_input_tokens: 0, cache_read_input_tokens: 300, output_tokens: 42 },
  },
];
const messageStop: Event = ["message_stop", { type: "message_stop" }];

function scripted(bodies: Response[]) {
  const seen = { calls: 0 };
  const client = new Anthropic({
    apiKey: "test",
    maxRetries: 0,
    fetch: async () => {
      const body = bodies[seen.calls++];
      if (!body) throw new Error("more model calls than scripted");
      return body;
    },
  });
  return { client, seen };
}

const request: ModelRequest = {
  model: SONNET.id,
  max_tokens: 1000,
  system: [],
  tools: [],
  messages: [{ role: "user", content: "tell me about the river" }],
};

/** `stopAt`: a text the turn is stopped on when it streams (the Stop a person presses). */
async function turn(bodies: Response[], opts: { stopAt?: string } = {}) {
  const { client, seen } = scripted(bodies);
  const saved: StoredMessage[] = [];
  const events: string[] = [];
  const stop = new AbortController();
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
      buildRequest: () => request,
      persist: persistInto(saved),
      emit: (e) => {
        events.push(e.type);
        if (e.type !== "delta") return;
        streamed += e.text;
        if (e.text === opts.stopAt) stop.abort();
      },
      retryDelayMs: () => 0,
      signal: stop.signal,
    },
    [{ type: "text", text: "tell me about the river" }],
  );
  const replies = saved.filter((m) => m.role === "assistant");
  return { outcome, replies, streamed, events, calls: seen.calls };
}

/** The reply a retry would get: were the call retried, this second, paid-for answer would be the turn's. */
const paidAgain = () =>
  sse([start(1300), ...textOpen("A second, paid-for answer."), blockStop, delta("end_turn"), messageStop]);

describe("a stream cut after message_delta, every block stopped", () => {
  it("is the whole reply: one model call, its text, stop_reason and message_delta's usage", async () => {
    const cut = sse([start(1200), ...textOpen(REPLY), blockStop, delta("end_turn")]);
    // Were the cut retried, this second reply would be the turn's.
    const again = paidAgain();
    const r = await turn([cut, again]);
    expect(r.calls).toBe(1);
    expect(r.outcome.modelCalls).toBe(1);
    expect(r.outcome.failure).toBeUndefined();
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.streamed).toBe(REPLY);
    expect(r.replies).toHaveLength(1);
    expect(r.replies[0]?.content).toEqual([expect.objectContaining({ type: "text", text: REPLY })]);
    expect(r.replies[0]?.stopReason).toBe("end_turn");
    expect(r.outcome.usage).toMatchObject({ input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 42 });
  });

  it("streamCall answers with the snapshot, stop_reason and usage as message_delta sent them", async () => {
    const { client, seen } = scripted([sse([start(1200), ...textOpen(REPLY), blockStop, delta("max_tokens")])]);
    const call = await streamCall({ client, request, turnId: "turn_1", emit: () => {} });
    expect(seen.calls).toBe(1);
    expect(call.ok).toBe(true);
    if (!call.ok) return;
    expect(call.reply.stop_reason).toBe("max_tokens");
    expect(call.reply.content).toEqual([expect.objectContaining({ type: "text", text: REPLY })]);
    expect(call.reply.usage).toMatchObject({ input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 42 });
  });
});

describe("a stream cut with a block still open", () => {
  it("after a message_delta is still a cut stream, retried", async () => {
    // Out of order on purpose: a stop_reason with the block unfinished is no whole reply.
    const cut = sse([start(1200), ...textOpen(REPLY), delta("end_turn")]);
    const whole = sse([start(1300), ...textOpen("The river is calm."), blockStop, delta("end_turn"), messageStop]);
    const r = await turn([cut, whole]);
    expect(r.calls).toBe(2);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.replies.some((m) => JSON.stringify(m.content).includes("The river is calm."))).toBe(true);
  });

  it("streamCall reports it as the retryable cut it is", async () => {
    const { client } = scripted([sse([start(1200), ...textOpen(REPLY), delta("end_turn")])]);
    const call = await streamCall({ client, request, turnId: "turn_1", emit: () => {} });
    expect(call.ok).toBe(false);
    if (call.ok) return;
    expect(isRetryableStreamError(call.error)).toBe(true);
    expect((call.error as Error).message).toMatch(/before message_stop/);
  });

  it("a new block opened after a message_delta and cut mid-way is a cut stream", async () => {
    const second: Event[] = [
      ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }],
      ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "more" } }],
    ];
    const { client } = scripted([sse([start(1200), ...textOpen(REPLY), blockStop, delta("end_turn"), ...second])]);
    const call = await streamCall({ client, request, turnId: "turn_1", emit: () => {} });
    expect(call.ok).toBe(false);
    if (!call.ok) expect(isRetryableStreamError(call.error)).toBe(true);
  });
});

// An `error` event (overloaded, say) where message_stop should have been: the API raises it inside
// the 200 stream, and the SDK as an APIError. After a message_delta with every block closed the
// reply is as whole as after a plain cut, and retrying it would pay for it (and its tools) again.
const overloaded: Event = ["error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }];

describe("an error event after message_delta, every block stopped", () => {
  it("is the whole reply: one model call, no retry, message_delta's stop_reason and usage", async () => {
    const broken = sse([start(1200), ...textOpen(REPLY), blockStop, delta("end_turn"), overloaded]);
    const again = paidAgain();
    const r = await turn([broken, again]);
    expect(r.calls).toBe(1);
    expect(r.events).not.toContain("retry");
    expect(r.outcome.modelCalls).toBe(1);
    expect(r.outcome.failure).toBeUndefined();
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.replies).toHaveLength(1);
    expect(r.replies[0]?.content).toEqual([expect.objectContaining({ type: "text", text: REPLY })]);
    expect(r.replies[0]?.stopReason).toBe("end_turn");
    expect(r.outcome.usage).toMatchObject({ input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 42 });
  });

  it("streamCall answers with a tool_use reply whole, so its call is not sent again", async () => {
    const toolUse: Event[] = [
      [
        "content_block_start",
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: "toolu_1", name: "lookup", input: {} },
        },
      ],
      [
        "content_block_delta",
        { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"q":"river"}' } },
      ],
      blockStop,
    ];
    const { client, seen } = scripted([sse([start(1200), ...toolUse, delta("tool_use"), overloaded])]);
    const call = await streamCall({ client, request, turnId: "turn_1", emit: () => {} });
    expect(seen.calls).toBe(1);
    expect(call.ok).toBe(true);
    if (!call.ok) return;
    expect(call.reply.stop_reason).toBe("tool_use");
    expect(call.reply.content).toEqual([expect.objectContaining({ type: "tool_use", input: { q: "river" } })]);
  });
});

describe("an error event the reply is not whole at", () => {
  it("before message_delta (every block closed, no stop_reason yet) is retried as before", async () => {
    const broken = sse([start(1200), ...textOpen(REPLY), blockStop, overloaded]);
    const more = " It reaches the sea at Harwick.";
    const whole = sse([start(1300), ...textOpen(more), blockStop, delta("end_turn"), messageStop]);
    const r = await turn([broken, whole]);
    expect(r.calls).toBe(2);
    expect(r.events).toContain("retry");
    expect(r.replies[0]?.stopReason).toBe("error");
    expect(r.replies[0]?.content).toEqual([expect.objectContaining({ type: "text", text: REPLY })]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.outcome.failure).toBeUndefined();
  });

  it("after a Stop, even past message_delta with every block closed, ends the turn as stopped", async () => {
    const broken = sse([start(1200), ...textOpen(REPLY), blockStop, delta("end_turn"), overloaded]);
    const again = sse([start(1300), ...textOpen("Never asked for."), blockStop, delta("end_turn"), messageStop]);
    const r = await turn([broken, again], { stopAt: REPLY });
    expect(r.calls).toBe(1);
    expect(r.events).not.toContain("retry");
    expect(r.outcome.stopReason).toBe("interrupted");
    expect(r.replies).toHaveLength(1);
    expect(r.replies[0]?.stopReason).toBe("interrupted");
    expect(r.replies[0]?.content).toEqual([expect.objectContaining({ type: "text", text: REPLY })]);
  });
});
