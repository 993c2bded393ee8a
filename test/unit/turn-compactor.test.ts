// The in-turn compactor keeps every pass standing in for what it replaced, for the rest of the
// turn: a later step's fresh build (the stored originals) is recognised as the same prefix, so a
// second pass is not thrown away at the next step and asked for again.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { catalogEntry } from "../../core/models/lookup";
import { costOf } from "../../core/pricing";
import { buildModelRequest } from "../../core/replay";
import { messageChars } from "../../core/render";
import { defaultSettings } from "../../core/settings";
import {
  type ContentBlock,
  type ModelRequest,
  type StoredMessage,
  type WireMessage,
  zeroUsage,
} from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const big = (n: number) => `row ${n} `.padEnd(20_000, "x");

/** The request a turn builds after `steps` file reads: the stored originals, a breakpoint on the last message. */
function built(steps: number): ModelRequest {
  const messages: WireMessage[] = [{ role: "user", content: [{ type: "text", text: "read all the files" }] }];
  for (let i = 0; i < steps; i++) {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "file_read", input: { n: i } }],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: big(i) }] });
  }
  const last = messages.at(-1)!.content as ContentBlock[];
  last[last.length - 1] = { ...last[last.length - 1], cache_control: { type: "ephemeral" } } as ContentBlock;
  return {
    model: "claude-sonnet-5-5",
    max_tokens: 1_000,
    system: [{ type: "text", text: "sys" }],
    tools: [],
    messages,
  };
}

const turn: StoredMessage[] = [
  {
    id: "msg_1",
    seq: 1,
    role: "user",
    createdAt: "2026-01-01T00:00:00Z",
    content: [{ type: "text", text: "read all the files" }],
  },
];
const BUDGET = {
  contextWindowTokens: 60_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 1.5,
};
/** A client whose every call is a turn-state answer of `inputTokens`; `onCall` sees the model asked. */
const stateClient = (onCall: (model: string) => unknown, inputTokens: number) =>
  ({
    messages: {
      create: async (params: { model: string }) => {
        onCall(params.model);
        return {
          content: [{ type: "text", text: "TASK:\n- read\nREMAINING:\n- rest" }],
          usage: { input_tokens: inputTokens, output_tokens: 10 },
        };
      },
    },
  }) as unknown as Anthropic;
const messagesChars = (r: ModelRequest) =>
  r.messages.reduce((n, m) => n + messageChars({ content: m.content as ContentBlock[] }), 0);
const breakpoints = (r: ModelRequest) => JSON.stringify(r.messages).split('"cache_control"').length - 1;

describe("the in-turn compactor", () => {
  it("keeps a second pass standing in at the next step, with no state call and one breakpoint of its own", async () => {
    let stateCalls = 0;
    const client = stateClient(() => stateCalls++, 10);
    const c = new TurnCompactor(BUDGET, client, SONNET, () => () => undefined);
    let r = c.apply(built(4));
    expect(c.due(r)).toBe(true);
    await c.compact(r, turn);
    r = c.apply(built(6));
    expect(c.active).toBe(true);
    expect(c.due(r)).toBe(true);
    const second = await c.compact(r, turn);
    expect(stateCalls).toBe(2);
    // The next step: its build holds the originals again; the second pass stands in for them.
    r = c.apply(built(7));
    expect(c.active).toBe(true);
    const secondChars = JSON.stringify(second.request.messages).length;
    expect(JSON.stringify(r.messages.slice(0, second.request.messages.length)).length).toBeLessThanOrEqual(secondChars);
    // Only the build's breakpoints (this build marks just its last message): the passes do not pile
    // theirs up. (The ones a real build puts on standing messages: turn-compaction-breakpoints.test.ts.)
    expect(breakpoints(r)).toBe(1);
    expect(stateCalls).toBe(2);
  });

  it("reports the request as sent: the figures after a pass count the turn state it carries", async () => {
    const c = new TurnCompactor(
      BUDGET,
      stateClient(() => undefined, 10),
      SONNET,
      () => () => undefined,
    );
    const request = c.apply(built(4));
    const out = await c.compact(request, turn);
    expect(JSON.stringify(out.request.messages)).toContain("<turn_state>");
    const sent = JSON.stringify(out.request.tools).length + 3 + messagesChars(out.request);
    expect(out.report.charsAfter).toBe(sent);
    expect(out.report.tokensAfter).toBe(Math.ceil(sent / BUDGET.charsPerToken));
    expect(out.report.tokensSaved).toBe(out.report.tokensBefore - out.report.tokensAfter);
    // A second pass's "before" is its request as sent: the first pass's turn state included.
    const next = c.apply(built(6));
    expect(JSON.stringify(next.messages)).toContain("<turn_state>");
    const sentBefore = JSON.stringify(next.tools).length + 3 + messagesChars(next);
    const second = await c.compact(next, turn);
    expect(second.report.charsBefore).toBe(sentBefore);
    expect(second.report.tokensBefore).toBe(Math.ceil(sentBefore / BUDGET.charsPerToken));
  });

  it("asks the model the turn asks now: after a refusal fallback, its state call goes to the fallback", async () => {
    const asked: string[] = [];
    const client = stateClient((model) => asked.push(model), 1_000);
    let active = SONNET;
    const c = new TurnCompactor(
      BUDGET,
      client,
      () => active,
      () => () => undefined,
    );
    await c.compact(c.apply(built(4)), turn);
    active = catalogEntry("claude-opus-5-5")!;
    const second = await c.compact(c.apply(built(6)), turn);
    expect(asked).toEqual(["claude-sonnet-5-5", "claude-opus-5-5"]);
    // Priced at the model it went to.
    expect(second.usage.cost_usd).toBeCloseTo(1_000 * 4e-6 + 10 * 20e-6, 9);
  });
  it("keeps a refusal's words out of the turn state, and bills a refusal as the API does", async () => {
    const refusing = (content: unknown[], category: string) =>
      ({
        messages: {
          create: async () => ({
            content,
            stop_reason: "refusal",
            stop_details: { type: "refusal", category, explanation: null },
            usage: { input_tokens: 1_000, output_tokens: content.length ? 10 : 0 },
          }),
        },
      }) as unknown as Anthropic;
    const words = "I would rather not summarize this";
    const billed = new TurnCompactor(BUDGET, refusing([{ type: "text", text: words }], "bio"), SONNET, () => () => {});
    const out = await billed.compact(billed.apply(built(4)), turn);
    expect(out.summarized).toBe("fallback");
    expect(JSON.stringify(out.request.messages)).not.toContain(words);
    const cost = costOf({ ...zeroUsage(), input_tokens: 1_000, output_tokens: 10 }, SONNET)!;
    expect(cost).toBeGreaterThan(0);
    expect(out.usage.cost_usd).toBe(cost);
    // A refusal before any output, in a category the API does not bill, costs nothing.
    const free = new TurnCompactor(BUDGET, refusing([], "cyber"), SONNET, () => () => {});
    const unbilled = await free.compact(free.apply(built(4)), turn);
    expect(unbilled.summarized).toBe("fallback");
    expect(unbilled.usage).toMatchObject({ input_tokens: 1_000, cost_usd: 0 });
  });
});

describe("a pass of the in-turn compactor", () => {
  const settings = {
    ...defaultSettings(SONNET),
    contextWindowTokens: 24_000,
    outputReserveTokens: 2_000,
    charsPerToken: 1.5,
  };
  let seq = 0;
  const stored = (
    role: "user" | "assistant",
    content: ContentBlock[],
    extra: Partial<StoredMessage> = {},
  ): StoredMessage => ({
    id: `msg_${++seq}`,
    seq,
    role,
    content,
    createdAt: "2026-01-01T00:00:00Z",
    ...extra,
  });
  const read = (id: string): ContentBlock => ({ type: "tool_use", id, name: "file_read", input: { part: id } });
  const answer = (id: string, n: number): ContentBlock => ({
    type: "tool_result",
    tool_use_id: id,
    content: `${id} ${"x".repeat(n)}`,
  });
  const build = (history: StoredMessage[]) =>
    buildModelRequest({
      conversationId: "conv_1",
      settings,
      model: SONNET,
      system: [{ type: "text", text: "sys" }],
      tools: [],
      history,
    }).request;
  const labels = (r: ModelRequest) =>
    (JSON.stringify(r.messages).match(/\[TRUNCATED[^\]]*\]/g) ?? []).map((l) => l.replaceAll('\\"', '"'));

  it("makes no state call and adds nothing when it cuts nothing: the request stays as it was", async () => {
    let stateCalls = 0;
    const c = new TurnCompactor(
      settings,
      stateClient(() => stateCalls++, 10),
      SONNET,
      () => () => undefined,
    );
    // Three results, all protected, together within the budget: nothing may be cut.
    const history = [
      stored("user", [{ type: "text", text: "read the three parts" }]),
      stored("assistant", [read("a"), read("b"), read("c")]),
    ];
    history.push(stored("user", [answer("a", 9_000), answer("b", 9_000), answer("c", 9_000)]));
    const request = c.apply(build(history));
    expect(c.due(request)).toBe(true);
    const out = await c.compact(request, history);
    expect(out.report.targets).toEqual([]);
    expect(out.report.tokensSaved).toBe(0);
    expect(stateCalls).toBe(0);
    expect(out.request).toEqual(request);
    expect(JSON.stringify(out.request)).not.toContain("<turn_state>");
    expect(c.active).toBe(false);
    expect(c.fruitless).toBe(true);
  });

  it("names the restoring call in every label: a block the build copied for its breakpoint, and a second pass's", async () => {
    const history = [stored("user", [{ type: "text", text: "read all parts" }])];
    for (const id of ["a", "b", "c", "d"])
      history.push(stored("assistant", [read(id)]), stored("user", [answer(id, 9_000)]));
    const c = new TurnCompactor(
      settings,
      stateClient(() => undefined, 10),
      SONNET,
      () => blockOrigins("conv_1", history),
    );
    await c.compact(c.apply(build(history)), history);
    for (const id of ["e", "f", "g", "h"])
      history.push(stored("assistant", [read(id)]), stored("user", [answer(id, 9_000)]));
    const second = c.apply(build(history));
    expect(c.due(second)).toBe(true);
    const out = await c.compact(second, history);
    // Every cut result is named by its stored message, the newest (a breakpoint's copy) included.
    const named = labels(out.request);
    expect(named.length).toBeGreaterThan(4);
    for (const label of named)
      expect(label).toMatch(/conversation_read \{"conversation_id":"conv_1","message_id":"msg_\d+","block":0\}/);
    // Only one state rides the request: the second pass's replaced the first's.
    expect(JSON.stringify(out.request.messages).split("<turn_state>")).toHaveLength(2);
    // The newest result, cut while it carries the breakpoint, names its stored message too.
    const parallel = [
      stored("user", [{ type: "text", text: "read both parts" }]),
      stored("assistant", [read("p"), read("q")]),
    ];
    parallel.push(stored("user", [answer("p", 30_000), answer("q", 30_000)]));
    const p = new TurnCompactor(
      settings,
      stateClient(() => undefined, 10),
      SONNET,
      () => blockOrigins("conv_1", parallel),
    );
    const cut = labels((await p.compact(p.apply(build(parallel)), parallel)).request);
    expect(cut).toHaveLength(2);
    expect(cut[1]).toContain(
      `conversation_read {"conversation_id":"conv_1","message_id":"${parallel[2].id}","block":1}`,
    );
  });

  it("keeps the turn's task prompt whole when continuation prompts and earlier passes follow it", async () => {
    const task = stored("user", [{ type: "text", text: `Total every part: ${"p".repeat(2_000)}` }]);
    const history = [
      stored("user", [{ type: "text", text: "hello" }]),
      stored("assistant", [{ type: "text", text: "hi" }]),
      task,
    ];
    const c = new TurnCompactor(
      settings,
      stateClient(() => undefined, 10),
      SONNET,
      () => blockOrigins("conv_1", history),
    );
    for (let i = 0; i < 6; i++) {
      // A cut-off reply (continued by a prompt of its own), then a read.
      history.push(
        stored("assistant", [{ type: "text", text: `partial ${i} ${"w".repeat(700)}` }], { stopReason: "max_tokens" }),
      );
      history.push(stored("assistant", [read(`r${i}`)]), stored("user", [answer(`r${i}`, 6_000)]));
      const request = c.apply(build(history));
      if (c.due(request)) {
        const out = await c.compact(request, history.slice(2));
        expect(JSON.stringify(out.request.messages)).toContain(JSON.stringify(task.content[0]));
      }
    }
    expect(c.active).toBe(true);
    expect(JSON.stringify(c.apply(build(history)).messages)).toContain(JSON.stringify(task.content[0]));
  });

  it("strips only its own earlier turn state: a prompt that starts with <turn_state> stays whole", async () => {
    const PROMPT = "<turn_state> is in my logs: read all the files and tell me where it comes from";
    const request = built(4);
    request.messages[0] = { role: "user", content: [{ type: "text", text: PROMPT }] };
    const c = new TurnCompactor(
      BUDGET,
      stateClient(() => undefined, 10),
      SONNET,
      () => () => undefined,
    );
    const out = await c.compact(c.apply(request), [{ ...turn[0], content: [{ type: "text", text: PROMPT }] }]);
    expect(out.request.messages[0]).toEqual({ role: "user", content: [{ type: "text", text: PROMPT }] });
    expect(out.request.messages.every((m) => typeof m.content === "string" || m.content.length > 0)).toBe(true);
  });
});
