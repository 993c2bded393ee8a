import { describe, expect, it } from "vitest";
import { buildModelRequest, estimateRequest, INTERRUPTED_TOOL_RESULT, toWireMessages } from "../../core/replay";
import { CONTINUE_PROMPT, EMPTY_RESULT } from "../../core/replay-rules";
import { thinkingPrefixes } from "../../core/thinking-guard";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

let seq = 0;
const msg = (role: "user" | "assistant", ...content: ContentBlock[]): StoredMessage => ({
  id: `msg_${++seq}`,
  seq,
  role,
  content,
  createdAt: "2026-01-01T00:00:00Z",
});
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const call = (id: string): ContentBlock => ({ type: "tool_use", id, name: "conversation_read", input: {} });
const result = (id: string): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: "ok" });

describe("toWireMessages", () => {
  it("replays a clean history verbatim, without ids or metadata", () => {
    const h = [msg("user", text("hi")), msg("assistant", text("hello"))];
    expect(toWireMessages(h)).toEqual([
      { role: "user", content: [text("hi")] },
      { role: "assistant", content: [text("hello")] },
    ]);
  });

  it("merges adjacent same-role messages (a failed turn's lone user message)", () => {
    const h = [msg("user", text("failed")), msg("user", text("retry")), msg("assistant", text("ok"))];
    expect(toWireMessages(h)).toEqual([
      { role: "user", content: [text("failed"), text("retry")] },
      { role: "assistant", content: [text("ok")] },
    ]);
  });

  it("answers a tool call whose result never came, without touching answered ones", () => {
    const h = [
      msg("user", text("go")),
      msg("assistant", call("a"), call("b")),
      msg("user", result("a")),
      msg("assistant", text("done")),
    ];
    const w = toWireMessages(h);
    expect(w[2].content).toEqual([
      { type: "tool_result", tool_use_id: "b", content: INTERRUPTED_TOOL_RESULT, is_error: true },
      result("a"),
    ]);
    const tail = toWireMessages([msg("user", text("go")), msg("assistant", call("c"))]);
    expect(tail).toHaveLength(3);
    expect(tail[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c", content: INTERRUPTED_TOOL_RESULT, is_error: true }],
    });
  });

  it("never starts on an assistant message", () => {
    expect(toWireMessages([msg("assistant", text("orphan")), msg("user", text("q"))])).toEqual([
      { role: "user", content: [text("q")] },
    ]);
  });

  it("does not mutate the stored history", () => {
    const h = [msg("user", text("a")), msg("user", text("b"))];
    const copy = structuredClone(h);
    toWireMessages(h);
    expect(h).toEqual(copy);
  });
});

describe("buildModelRequest", () => {
  it("carries the settings' model and output reserve, the system prompt and tools, and estimates at charsPerToken", () => {
    const settings = { ...defaultSettings(), charsPerToken: 2, outputReserveTokens: 1000, contextWindowTokens: 10_000 };
    const { request, estimate } = buildModelRequest({
      model: SONNET,
      conversationId: "conv_X",
      settings,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history: [msg("user", text("x".repeat(100)))],
    });
    expect(request.model).toBe(settings.model);
    expect(request.max_tokens).toBe(1000);
    expect(estimate.chars).toBe(3 + 2 + 100);
    expect(estimate.tokens).toBe(Math.ceil(105 / 2));
    expect(estimate.budgetTokens).toBe(9000);
    expect(estimateRequest(request, settings)).toEqual({
      ...estimate,
      stubbedResults: undefined,
      stubSavedChars: undefined,
      stubPendingChars: undefined,
    });
  });
});

describe("workflow mode segments", () => {
  it("leave the master's replay, keeping its delegate call paired with its result", () => {
    const tag = { segment: "agt_1", name: "reader", toolUseId: "d1" };
    const sub = (m: StoredMessage): StoredMessage => ({ ...m, agent: tag });
    const h = [
      msg("user", text("delegate it")),
      msg("assistant", { type: "tool_use", id: "d1", name: "agent_delegate", input: { task: "read" } }),
      sub(msg("user", text("read"))),
      sub(msg("assistant", call("s1"))),
      sub(msg("user", { type: "tool_result", tool_use_id: "s1", content: "the sub-agent's bulky read" })),
      sub(msg("assistant", text("answer: 42"))),
      msg("user", { type: "tool_result", tool_use_id: "d1", content: "answer: 42" }),
      msg("assistant", text("It is 42.")),
    ];
    const { request } = buildModelRequest({
      model: SONNET,
      conversationId: "conv_1",
      settings: defaultSettings(),
      system: [],
      tools: [],
      history: h,
    });
    const wire = JSON.stringify(request.messages);
    expect(request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(wire).not.toContain("bulky read");
    expect(wire).not.toContain('"s1"');
    expect(wire.split("answer: 42").length - 1).toBe(1);
    expect(wire).not.toContain(INTERRUPTED_TOOL_RESULT);
  });
});

describe("the API's replay rules", () => {
  const thinking = (t: string, sig = `sig_${t}`): ContentBlock => ({ type: "thinking", thinking: t, signature: sig });
  const asst = (stopReason: string, ...content: ContentBlock[]): StoredMessage => ({
    ...msg("assistant", ...content),
    stopReason,
  });

  it("carries thinking through as stored; the request keeps it only where its recorded prefix still holds", () => {
    const h = [msg("user", text("first")), asst("end_turn", thinking("old"), text("one")), msg("user", text("second"))];
    expect(toWireMessages(h)[1].content).toEqual([thinking("old"), text("one")]);
    const settings = defaultSettings();
    const build = (history: StoredMessage[]) =>
      buildModelRequest({ model: SONNET, conversationId: "conv_1", settings, system: [], tools: [], history }).request;
    // Without a recorded prefix (an imported reply) the block never goes back.
    expect(JSON.stringify(build(h).messages)).not.toContain('"thinking"');
    // With the prefix of the request it answered (what the turn loop stores), it goes back on later turns.
    const answered = build([h[0]]);
    const recorded = { ...h[1], thinkingPrefixes: thinkingPrefixes(answered, h[1].content) };
    expect(build([h[0], recorded, h[2]]).messages[1].content).toEqual([thinking("old"), text("one")]);
    // Once something before it moves (here a new system prompt), it is left out.
    const moved = buildModelRequest({
      model: SONNET,
      conversationId: "conv_1",
      settings,
      system: [{ type: "text", text: "a new day" }],
      tools: [],
      history: [h[0], recorded, h[2]],
    }).request;
    expect(moved.messages[1].content).toEqual([text("one")]);
    // A reply of nothing but thinking that cannot go back leaves no empty message behind.
    expect(build([msg("user", text("a")), asst("max_tokens", thinking("x")), msg("user", text("b"))]).messages).toEqual(
      // "a" keeps the breakpoint of the request before (its last message then).
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a", cache_control: { type: "ephemeral" } },
            { type: "text", text: "b", cache_control: { type: "ephemeral" } },
          ],
        },
      ],
    );
  });

  it("leaves a refused turn out whole, and only the refusal when a fallback answered in the same turn", () => {
    const refused = [
      msg("user", text("ok")),
      asst("end_turn", text("fine")),
      msg("user", text("bad ask")),
      asst("refusal", text("partial")),
      msg("user", text("next")),
    ];
    expect(JSON.stringify(toWireMessages(refused))).not.toMatch(/bad ask|partial/);
    expect(toWireMessages(refused).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const fellBack = [
      msg("user", text("ask")),
      asst("refusal", text("partial")),
      asst("end_turn", text("answer from the fallback")),
    ];
    expect(toWireMessages(fellBack)).toEqual([
      { role: "user", content: [text("ask")] },
      { role: "assistant", content: [text("answer from the fallback")] },
    ]);
  });

  it("drops whitespace-only text and answers a blank tool result with readable text", () => {
    const h = [
      msg("user", text("  \n"), text("real")),
      msg("assistant", call("t")),
      msg("user", { type: "tool_result", tool_use_id: "t", content: " \t" }),
    ];
    const w = toWireMessages(h);
    expect(w[0].content).toEqual([text("real")]);
    expect(w[2].content).toEqual([{ type: "tool_result", tool_use_id: "t", content: EMPTY_RESULT }]);
    expect(toWireMessages([msg("user", text("   ")), msg("user", text("q"))])).toEqual([
      { role: "user", content: [text("q")] },
    ]);
  });

  it("continues a cut-off reply with a user message, never by prefill", () => {
    const last = toWireMessages([msg("user", text("write")), asst("max_tokens", text("part one"))]);
    expect(last.at(-1)).toEqual({ role: "user", content: [text(CONTINUE_PROMPT)] });
    const continued = toWireMessages([
      msg("user", text("write")),
      asst("max_tokens", text("part one")),
      asst("end_turn", text("part two")),
      msg("user", text("thanks")),
    ]);
    expect(continued.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    // Not after a reply that ended normally, nor before a new prompt.
    expect(
      toWireMessages([msg("user", text("q")), asst("max_tokens", text("cut")), msg("user", text("new question"))]),
    ).toHaveLength(3);
  });

  it("sends an imported message's words without its sealed blocks, and what came after the import whole", () => {
    const use: ContentBlock = { type: "server_tool_use", id: "srvtoolu_9", name: "web_search", input: { query: "q" } };
    const found: ContentBlock = { type: "web_search_tool_result", tool_use_id: "srvtoolu_9", content: [] };
    const cited: ContentBlock = { type: "text", text: "cited", citations: [{ type: "web_search_result_location" }] };
    const sealed = [thinking("why"), use, found];
    const h = [
      msg("user", text("q1")),
      msg("assistant", ...sealed, cited),
      msg("user", text("q2")),
      msg("assistant", ...sealed),
      msg("user", text("q3")),
      msg("assistant", ...sealed, cited),
    ];
    const importedThrough = h[3].seq;
    const w = toWireMessages(h, importedThrough);
    // A reply left with nothing is dropped and the prompts around it merge, so roles still alternate.
    expect(w.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(w[1].content).toEqual([text("cited")]);
    expect(w[2].content).toEqual([text("q2"), text("q3")]);
    expect(w[3].content).toEqual([...sealed, cited]);
    // The stored messages are untouched.
    expect(h[1].content).toEqual([...sealed, cited]);
  });

  it("resends a paused reply as the final message, and drops a server call left without its result earlier", () => {
    const use: ContentBlock = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } };
    const paused = toWireMessages([msg("user", text("search")), asst("pause_turn", use)]);
    expect(paused.at(-1)).toEqual({ role: "assistant", content: [use] });
    const stale = toWireMessages([
      msg("user", text("search")),
      asst("pause_turn", use, text("looking")),
      msg("user", text("next")),
    ]);
    expect(stale[1].content).toEqual([text("looking")]);
    // A reply with a server call and a client call: the server's result opens the next response,
    // after the client's results. Until then the call is kept; after, it pairs with that result.
    const both = [msg("user", text("search and ask")), asst("tool_use", use, call("c1")), msg("user", result("c1"))];
    expect(toWireMessages(both)[1].content).toEqual([use, call("c1")]);
    const found: ContentBlock = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] };
    const answered = toWireMessages([...both, asst("end_turn", found, text("done")), msg("user", text("thanks"))]);
    expect(answered[1].content).toEqual([use, call("c1")]);
    expect(answered[3].content).toEqual([found, text("done")]);
    // A result whose call is gone is left out with it.
    expect(
      toWireMessages([msg("user", text("q")), asst("end_turn", found, text("ok")), msg("user", text("next"))])[1]
        .content,
    ).toEqual([text("ok")]);
  });

  it("never puts a cache breakpoint on a thinking block", () => {
    const { request } = buildModelRequest({
      model: SONNET,
      conversationId: "conv_1",
      settings: defaultSettings(),
      system: [],
      tools: [],
      // A paused reply resent as the last message can end on a thinking block (one that may go back).
      history: [
        msg("user", text("go")),
        {
          ...asst("pause_turn", text("searching"), thinking("mid")),
          thinkingPrefixes: thinkingPrefixes(
            { model: "m", max_tokens: 1, system: [], tools: [], messages: [{ role: "user", content: [text("go")] }] },
            [text("searching"), thinking("mid")],
          ),
        },
      ],
    });
    const last = request.messages[1].content as ContentBlock[];
    expect(last[1]).toEqual(thinking("mid"));
    expect((last[0] as { cache_control?: unknown }).cache_control).toEqual({ type: "ephemeral" });
  });
});
