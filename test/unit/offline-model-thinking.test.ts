// Thinking like the real models: on by default where the model's default is adaptive, shown as a
// summary or omitted, billed at its full length, scaled by effort, cut by max_tokens, progress
// updates before tool calls, and streamed as thinking_delta + signature_delta.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { ask, makeClient, rawPost, textOf, TOOLS, toolUses } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const client = makeClient();
const thinkingBlocks = (m: Anthropic.Message) =>
  m.content.filter((b): b is Anthropic.ThinkingBlock => b.type === "thinking");
const types = (m: Anthropic.Message) => m.content.map((b) => b.type);

describe("thinking", () => {
  it("thinks by default where the model's default is adaptive, with the text omitted but billed in full", async () => {
    const reply = await client.messages.create(ask("Plan a picnic by the river.", { model: "claude-sonnet-5-5" }));
    expect(types(reply)).toEqual(["thinking", "text"]);
    const [block] = thinkingBlocks(reply);
    expect(block.thinking).toBe("");
    expect(block.signature.length).toBeGreaterThan(100);
    const thinkingTokens = reply.usage.output_tokens_details?.thinking_tokens ?? 0;
    expect(thinkingTokens).toBeGreaterThan(16);
    expect(reply.usage.output_tokens).toBeGreaterThan(thinkingTokens);
    // Claude Opus 4.8 does not think unless asked.
    const opus48 = await client.messages.create(ask("Plan a picnic by the river.", { model: "claude-opus-4-8" }));
    expect(types(opus48)).toEqual(["text"]);
    expect(opus48.usage.output_tokens_details?.thinking_tokens).toBe(0);
    expect(
      types(
        await client.messages.create(
          ask("Plan a picnic.", { model: "claude-opus-4-8", thinking: { type: "adaptive" } }),
        ),
      ),
    ).toEqual(["thinking", "text"]);
  });

  it("shows a summary derived from the prompt under display summarized, with the same signature and billing", async () => {
    const omitted = await client.messages.create(ask("Plan a picnic by the river."));
    const summarized = await client.messages.create(
      ask("Plan a picnic by the river.", { thinking: { type: "adaptive", display: "summarized" } }),
    );
    expect(thinkingBlocks(summarized)[0].thinking).toBe(
      'Considering the request: "Plan a picnic by the river.". Plan: reply directly.',
    );
    expect(thinkingBlocks(summarized)[0].signature).toBe(thinkingBlocks(omitted)[0].signature);
    expect(summarized.usage.output_tokens).toBe(omitted.usage.output_tokens);
    // Models whose default display is summarized (Claude Sonnet 4.6) show it unasked.
    const sonnet46 = await client.messages.create(
      ask("Plan a picnic.", { model: "claude-sonnet-4-6", thinking: { type: "adaptive" } }),
    );
    expect(thinkingBlocks(sonnet46)[0].thinking).toMatch(/^Considering the request/);
  });

  it("scales the reasoning with effort and caps it with a manual budget", async () => {
    const tokens = async (effort: "low" | "medium" | "high" | "xhigh" | "max") =>
      (await client.messages.create(ask("Compare three bridge designs in detail.", { output_config: { effort } })))
        .usage.output_tokens_details!.thinking_tokens;
    const spent = [
      await tokens("low"),
      await tokens("medium"),
      await tokens("high"),
      await tokens("xhigh"),
      await tokens("max"),
    ];
    expect([...spent].sort((a, b) => a - b)).toEqual(spent);
    expect(spent[4]).toBeGreaterThanOrEqual(spent[0] * 6);
    const budgeted = await client.messages.create(
      ask("Compare three bridge designs in detail.", {
        model: "claude-sonnet-4-6",
        max_tokens: 5_000,
        thinking: { type: "enabled", budget_tokens: 1_024 },
      }),
    );
    expect(budgeted.usage.output_tokens_details!.thinking_tokens).toBeLessThanOrEqual(1_024);
  });

  it("stops during thinking when max_tokens is small: only the thinking block, stop_reason max_tokens", async () => {
    const reply = await client.messages.create(ask("Plan a picnic by the river.", { max_tokens: 10 }));
    expect(types(reply)).toEqual(["thinking"]);
    expect(reply.stop_reason).toBe("max_tokens");
    expect(reply.usage.output_tokens).toBe(10);
    const directed = await client.messages.create(ask("Plan a picnic.\n@max-tokens-stop thinking"));
    expect(types(directed)).toEqual(["thinking"]);
    expect(directed.stop_reason).toBe("max_tokens");
  });

  it("writes the note before tool calls as a progress-update block on models that do, as text elsewhere", async () => {
    const prompt = '@tool read_file {"path":"a.ts"}';
    const sonnet55 = await client.messages.create(
      ask(prompt, { tools: TOOLS, thinking: { type: "adaptive", display: "summarized" } }),
    );
    expect(types(sonnet55)).toEqual(["thinking", "thinking", "tool_use"]);
    expect(thinkingBlocks(sonnet55)[1].thinking).toBe("Calling 1 tool: read_file.");
    const omitted = await client.messages.create(ask(prompt, { tools: TOOLS }));
    expect(thinkingBlocks(omitted).map((b) => b.thinking)).toEqual(["", ""]);
    // between_tools: no up-front thinking, the progress update with its text.
    const between = await client.messages.create(ask(prompt, { tools: TOOLS, thinking: { type: "between_tools" } }));
    expect(types(between)).toEqual(["thinking", "tool_use"]);
    expect(thinkingBlocks(between)[0].thinking).toBe("Calling 1 tool: read_file.");
    // Claude Sonnet 5 keeps the note as text.
    const sonnet5 = await client.messages.create(ask(prompt, { model: "claude-sonnet-5", tools: TOOLS }));
    expect(types(sonnet5)).toEqual(["thinking", "text", "tool_use"]);
    expect(textOf(sonnet5)).toBe("Calling 1 tool: read_file.");
  });

  it("adds a redacted_thinking block on @redacted-thinking, and skips thinking under a forced tool choice", async () => {
    const redacted = await client.messages.create(ask("Think.\n@redacted-thinking"));
    expect(types(redacted)).toEqual(["thinking", "redacted_thinking", "text"]);
    const forced = await client.messages.create(
      ask("Read something.", {
        model: "claude-haiku-5-5",
        tools: TOOLS,
        tool_choice: { type: "tool", name: "read_file" },
      }),
    );
    expect(types(forced)).toEqual(["tool_use"]);
    expect(toolUses(forced)[0].name).toBe("read_file");
  });

  it("streams a thinking block as the real API does: empty start, thinking deltas, one signature delta", async () => {
    const params = ask("Stream a plan for the garden.", { thinking: { type: "adaptive", display: "summarized" } });
    const response = await rawPost({ ...params, stream: true });
    const frames = (await response.text())
      .split("\n\n")
      .filter(Boolean)
      .map((f) => JSON.parse(f.slice(f.indexOf("data: ") + 6)));
    expect(frames[2]).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    const deltas = frames.filter((f) => f.type === "content_block_delta" && f.index === 0).map((f) => f.delta.type);
    expect(deltas.at(-1)).toBe("signature_delta");
    expect(deltas.filter((t) => t === "signature_delta")).toHaveLength(1);
    expect(deltas.slice(0, -1).every((t) => t === "thinking_delta")).toBe(true);
    const streamed = await client.messages.stream(params).finalMessage();
    const plain = await client.messages.create(params);
    expect(streamed.content).toEqual(plain.content);
    expect(streamed.usage.output_tokens_details).toEqual(plain.usage.output_tokens_details);
  });

  it("counts tokens with the model's tokenizer ratio (Claude Sonnet 5.5 about 1.3 × the stand-in)", async () => {
    const text = "The ledger reconciliation notes continue here with more words. ".repeat(40);
    const count = async (model: string) =>
      (await client.messages.countTokens({ model, messages: [{ role: "user", content: text }] })).input_tokens;
    const base = await count("offline-200k");
    expect(await count("claude-sonnet-4-6")).toBe(base);
    expect(await count("claude-sonnet-5-5")).toBeGreaterThanOrEqual(Math.floor(base * 1.3));
    expect(await count("claude-sonnet-5-5")).toBeLessThanOrEqual(Math.ceil(base * 1.3) + 2);
  });
});
