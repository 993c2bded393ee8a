// Every stop reason and stream failure of the Messages API through runAgentTurn, with a scripted
// provider and the real replay: refusal (with and without a fallback), pause_turn, a reply cut off
// with nothing but thinking, and an error event mid-stream (retried, its text kept).
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { describeModelError } from "../../agent/model-errors";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { runAgentTurn, type TurnDeps } from "../../agent/turn-loop";
import type { TurnEvent } from "../../core/events";
import { catalogEntry } from "../../core/models/lookup";
import { toWireMessages } from "../../core/replay";
import { CONTINUE_PROMPT } from "../../core/replay-rules";
import { knownThinking } from "../../core/thinking-guard";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { persistInto } from "./turn-harness";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

type Scripted =
  | { content: ContentBlock[]; stop: string; stopDetails?: Record<string, unknown>; outputTokens?: number }
  | { streamError: "overloaded_error" | "api_error" | "invalid_request_error"; partial?: ContentBlock[] };

const usage = (output = 5) => ({
  input_tokens: 100,
  output_tokens: output,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});

function scripted(replies: Scripted[]) {
  const requests: ModelRequest[] = [];
  const client = {
    messages: {
      stream(params: ModelRequest) {
        requests.push(structuredClone(params));
        const r = replies[requests.length - 1];
        if (!r) throw new Error("more model calls than scripted");
        if ("streamError" in r) {
          const body = {
            type: "error",
            error: { type: r.streamError, message: r.streamError === "overloaded_error" ? "Overloaded" : "Internal" },
          };
          const error = new Anthropic.APIError(
            undefined,
            body,
            JSON.stringify(body),
            new Headers({ "request-id": "req_mid_stream" }),
            r.streamError,
          );
          return {
            on: () => undefined,
            finalMessage: async () => Promise.reject(error),
            currentMessage: r.partial ? { content: r.partial, usage: usage(3) } : undefined,
          };
        }
        const message = {
          id: `msg_${requests.length}`,
          type: "message",
          role: "assistant",
          model: params.model,
          content: r.content,
          stop_reason: r.stop,
          stop_details: r.stopDetails ?? null,
          stop_sequence: null,
          usage: usage(r.outputTokens),
        };
        return { on: () => undefined, finalMessage: async () => message, currentMessage: message };
      },
    },
  };
  return { client: client as unknown as Anthropic, requests };
}

async function turn(replies: Scripted[], extra: Partial<TurnDeps> = {}) {
  const { client, requests } = scripted(replies);
  const saved: StoredMessage[] = [];
  const events: TurnEvent[] = [];
  const outcome = await runAgentTurn(
    {
      turnId: "turn_1",
      client,
      registry: new ToolRegistry(),
      toolContext: { activeTools: [] } as unknown as ToolContext,
      maxIterations: 10,
      contextWindowTokens: SONNET.contextWindow,
      model: SONNET,
      buildRequest: (): ModelRequest => ({
        model: SONNET.id,
        max_tokens: 1_000,
        system: [],
        tools: [],
        messages: toWireMessages(saved),
      }),
      knownThinking: () => knownThinking(saved),
      persist: persistInto(saved),
      emit: (e) => events.push(e),
      retryDelayMs: () => 1,
      ...extra,
    },
    [{ type: "text", text: "the prompt" }],
  );
  return { outcome, requests, saved, events };
}

const text = (t: string): ContentBlock => ({ type: "text", text: t });
const lastMessage = (r: ModelRequest) => r.messages[r.messages.length - 1];

describe("stop reasons", () => {
  it("refusal: the refused reply is saved and never replayed; the turn ends refused, with its category", async () => {
    const r = await turn([
      {
        content: [text("I started to")],
        stop: "refusal",
        stopDetails: { type: "refusal", category: "cyber", explanation: "not this" },
      },
    ]);
    expect(r.outcome.stopReason).toBe("refusal");
    expect(r.saved[1]).toMatchObject({ role: "assistant", stopReason: "refusal", content: [text("I started to")] });
    expect(r.events.find((e) => e.type === "refusal")).toMatchObject({ category: "cyber", explanation: "not this" });
    // The next turn's request leaves the refused turn out, prompt and all.
    const next = toWireMessages([
      ...r.saved,
      { id: "x", seq: 9, role: "user", content: [text("something else")], createdAt: "" },
    ]);
    expect(next).toEqual([{ role: "user", content: [text("something else")] }]);
  });

  it("refusal before any output still leaves a record, and a fallback model answers the same request", async () => {
    const r = await turn(
      [
        { content: [], stop: "refusal", stopDetails: { type: "refusal", category: null, explanation: null } },
        { content: [text("the fallback's answer")], stop: "end_turn" },
      ],
      { fallBack: async () => "claude-opus-5-5" },
    );
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.saved[1].content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/^\[refused: /) });
    // A refusal before any output, of no billed category, costs nothing.
    expect(r.saved[1].usage?.cost_usd).toBe(0);
    expect(r.events.find((e) => e.type === "refusal")).toMatchObject({ fallbackModel: "claude-opus-5-5" });
    // The fallback is asked the prompt itself, without the refused reply.
    expect(r.requests[1].messages).toEqual([{ role: "user", content: [text("the prompt")] }]);
  });

  it("pause_turn: the paused reply goes back as the last message, with no new user text", async () => {
    const use: ContentBlock = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } };
    const r = await turn([
      { content: [text("Searching."), use], stop: "pause_turn" },
      {
        content: [{ type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] }, text("Found it.")],
        stop: "end_turn",
      },
    ]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(lastMessage(r.requests[1])).toEqual({ role: "assistant", content: [text("Searching."), use] });
  });

  it("max_tokens with nothing but thinking continues with a user message and twice the room", async () => {
    const r = await turn([
      { content: [{ type: "thinking", thinking: "", signature: "sig_1" }], stop: "max_tokens" },
      { content: [text("The answer.")], stop: "end_turn" },
    ]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.requests[1].max_tokens).toBe(2_000);
    expect(lastMessage(r.requests[1])).toEqual({ role: "user", content: [text(CONTINUE_PROMPT)] });
    // Within the turn the thinking goes back exactly as it came.
    expect(r.requests[1].messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "thinking", thinking: "", signature: "sig_1" }],
    });
  });

  it("model_context_window_exceeded is a cut-off reply: it is continued", async () => {
    const r = await turn([
      { content: [text("Part one")], stop: "model_context_window_exceeded" },
      { content: [text(" and part two.")], stop: "end_turn" },
    ]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.requests).toHaveLength(2);
    expect(lastMessage(r.requests[1])).toEqual({ role: "user", content: [text(CONTINUE_PROMPT)] });
  });
});

describe("an error inside a stream", () => {
  it("keeps the streamed text as a partial reply and continues it after a backoff", async () => {
    const r = await turn([
      { streamError: "overloaded_error", partial: [text("Half an ans")] },
      { content: [text("wer.")], stop: "end_turn" },
    ]);
    expect(r.outcome.stopReason).toBe("end_turn");
    expect(r.saved[1]).toMatchObject({ role: "assistant", stopReason: "error", content: [text("Half an ans")] });
    expect(r.events.find((e) => e.type === "retry")).toMatchObject({ attempt: 1, error: { type: "overloaded_error" } });
    expect(lastMessage(r.requests[1])).toEqual({ role: "user", content: [text(CONTINUE_PROMPT)] });
  });

  it("asks the same request again when nothing was streamed, and gives up after two retries with a readable error", async () => {
    const r = await turn([{ streamError: "api_error" }, { streamError: "api_error" }, { streamError: "api_error" }]);
    expect(r.requests).toHaveLength(3);
    expect(r.requests[2]).toEqual(r.requests[0]);
    expect(r.outcome.stopReason).toBe("error");
    expect(r.outcome.failure?.message).toBe(
      "the model API had an internal error; try again (api_error): Internal; request id req_mid_stream",
    );
    expect(r.outcome.failure?.requestId).toBe("req_mid_stream");
  });

  it("does not retry an error the API means as final", async () => {
    const r = await turn([{ streamError: "invalid_request_error" }]);
    expect(r.requests).toHaveLength(1);
    expect(r.outcome.stopReason).toBe("error");
  });
});

describe("model errors as people read them", () => {
  it("name the API's meaning, its detail and the request id, never the raw JSON body", () => {
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" }, request_id: "req_011" };
    const err = Anthropic.APIError.generate(529, body, undefined, new Headers({ "request-id": "req_011" }));
    const failure = describeModelError(err);
    expect(failure).toMatchObject({ status: 529, providerType: "overloaded_error", requestId: "req_011" });
    expect(failure.message).toBe(
      "the model API is overloaded; try again shortly (529 overloaded_error): Overloaded; request id req_011",
    );
    expect(failure.message).not.toContain("{");
  });
});
