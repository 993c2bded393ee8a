// A sub-agent whose final reply carries no text: the API's empty end_turn after tool results (content
// [], never saved) or a reply of thinking only. Its answer is then the text it wrote last before it,
// marked as such; a thread with no text at all is reported as an agent that ended without an answer.
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { runSubAgent } from "../../agent/sub-agent";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { persistInto } from "./turn-harness";

/** A provider answering its calls with `replies` in turn (the last one again after them), recording the requests. */
function scripted(replies: Array<{ content: ContentBlock[]; stop: string; out?: number }>, requests: ModelRequest[]) {
  const client = {
    messages: {
      stream(request: ModelRequest) {
        requests.push(structuredClone(request));
        const { content, stop, out } = replies[Math.min(requests.length, replies.length) - 1];
        const message = {
          id: `msg_${requests.length}`,
          type: "message",
          role: "assistant",
          model: "scripted",
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage: {
            input_tokens: 10,
            output_tokens: out ?? 100,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        };
        return { on: () => undefined, finalMessage: async () => message };
      },
    },
  };
  return client as unknown as Anthropic;
}

const registry = new ToolRegistry().register({
  name: "echo",
  description: "echo",
  capability: "echo",
  core: true,
  input: z.object({ q: z.string() }),
  run: async ({ q }) => ({ content: `saved ${q}` }),
});

async function runWith(first: ContentBlock[], last: ContentBlock[]) {
  const saved: StoredMessage[] = [];
  const requests: ModelRequest[] = [];
  const client = scripted(
    [
      { content: [...first, { type: "tool_use", id: "t1", name: "echo", input: { q: "note" } }], stop: "tool_use" },
      { content: last, stop: "end_turn", out: 3 },
    ],
    requests,
  );
  const run = await runSubAgent(
    {
      client,
      model: catalogEntry("claude-sonnet-5-5")!,
      registry,
      toolContext: { activeTools: [], conversationId: "conv_1" } as unknown as ToolContext,
      contextWindowTokens: 100_000,
      persist: persistInto(saved),
    },
    { name: "figures", task: "Find the answer and save a note", toolUseId: "d1" },
    {
      turnId: "turn_1",
      request: {
        model: "scripted",
        max_tokens: 100,
        system: [],
        tools: [],
        messages: [{ role: "user", content: "go" }],
      },
      emit: () => undefined,
    },
  );
  return { run, saved, requests };
}

const finals: Array<{ label: string; last: ContentBlock[] }> = [
  { label: "empty (content [])", last: [] },
  { label: "thinking only", last: [{ type: "thinking", thinking: "progress: saved the note", signature: "sig" }] },
];

describe("a sub-agent whose final reply has no text", () => {
  for (const { label, last } of finals) {
    it(`${label}: passes on its last words before it, marked`, async () => {
      const { run, requests } = await runWith([{ type: "text", text: "The answer is 42 (ids a1, a2)." }], last);
      expect(requests).toHaveLength(2);
      expect(run.output.isError).toBeFalsy();
      expect(run.output.content).toContain("[its final reply was empty; its last words before it:]");
      expect(run.output.content).toContain("The answer is 42 (ids a1, a2).");
      expect(run.output.content).toContain("conversation_read");
    });

    it(`${label}, and no text anywhere in its thread: an error saying it ended without an answer`, async () => {
      const { run } = await runWith([], last);
      expect(run.output.isError).toBe(true);
      expect(run.output.content).toContain("agent figures ended without an answer");
      expect(run.output.content).toContain("conversation_read");
    });
  }
});
