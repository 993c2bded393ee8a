// Thinking across an in-turn compaction, through runAgentTurn with the real request builder and a
// scripted provider: a reply produced after a compacted request followed the compacted prefix, so
// its thinking goes back in every later request of the turn while that compaction stands.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn } from "../../agent/turn-loop";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { knownThinking } from "../../core/thinking-guard";
import type { ModelRequest, NewMessage, StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const settings = {
  ...defaultSettings(SONNET),
  contextWindowTokens: 24_000,
  outputReserveTokens: 2_000,
  charsPerToken: 1.5,
};
const STEPS = 8;

/** Each call answers with signed thinking and, until the last, one `read` call; every request is kept. */
function scriptedClient(sent: ModelRequest[]) {
  const client = {
    messages: {
      stream(params: ModelRequest) {
        sent.push(structuredClone(params));
        const n = sent.length;
        const message = {
          id: `msg_${n}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5-5",
          content: [
            { type: "thinking", thinking: `plan ${n}`, signature: `sig_${n}` },
            n < STEPS
              ? { type: "tool_use", id: `toolu_${n}`, name: "read", input: { n } }
              : { type: "text", text: "done" },
          ],
          stop_reason: n < STEPS ? "tool_use" : "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return client as unknown as Anthropic;
}

const failingStateCall = {
  messages: {
    create: async () => {
      throw new Error("offline");
    },
  },
} as unknown as Anthropic;

describe("thinking across an in-turn compaction", () => {
  it("sends back the thinking of a reply to a compacted request in the turn's later requests", async () => {
    // The first read is large (the pass cuts it); the others are small, so one pass is enough.
    const registry = new ToolRegistry().register({
      name: "read",
      core: true,
      capability: "read",
      description: "read",
      input: z.strictObject({ n: z.number() }),
      run: async ({ n }: { n: number }) => ({ content: `${n}:`.padEnd(n === 1 ? 23_500 : 500, "r") }),
    });
    const history: StoredMessage[] = [];
    const sent: ModelRequest[] = [];
    const outcome = await runAgentTurn(
      {
        turnId: "turn_1",
        client: scriptedClient(sent),
        registry,
        toolContext: { activeTools: [] } as unknown as ToolContext,
        maxIterations: 20,
        contextWindowTokens: settings.contextWindowTokens,
        model: SONNET,
        compactor: new TurnCompactor(settings, failingStateCall, SONNET, () => blockOrigins("conv_T", history)),
        buildRequest: () =>
          buildModelRequest({
            conversationId: "conv_T",
            settings,
            model: SONNET,
            system: [{ type: "text", text: "sys" }],
            tools: registry.schemasFor(),
            history,
          }).request,
        knownThinking: () => knownThinking(history),
        persist: async (messages: NewMessage[]) => {
          const stored = messages.map((m, i) => ({
            ...m,
            id: `m${history.length + i + 1}`,
            seq: history.length + i + 1,
            createdAt: "",
          }));
          history.push(...stored);
          return stored;
        },
        emit: () => undefined,
      },
      [{ type: "text", text: "read everything" }],
    );
    expect(outcome.stopReason).toBe("end_turn");
    expect(sent).toHaveLength(STEPS);
    const compacted = sent.map((r) => JSON.stringify(r.messages).includes("<turn_state>"));
    const first = compacted.indexOf(true);
    // One pass, early enough to leave later steps: it stands in from there to the end of the turn.
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(STEPS - 2);
    expect(compacted.slice(first).every(Boolean)).toBe(true);
    expect(sent.slice(first).every((r) => JSON.stringify(r.messages).split("<turn_state>").length === 2)).toBe(true);
    // Every reply to a compacted request (call k+1 answers request k) goes back with its thinking.
    for (let at = first + 1; at < STEPS; at++) {
      const text = JSON.stringify(sent[at].messages);
      for (let produced = first + 1; produced <= at; produced++) expect(text).toContain(`"sig_${produced}"`);
    }
  });
});
