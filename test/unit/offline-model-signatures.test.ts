// Thinking signatures sent back to the offline model: tampered, cut or emptied ones are refused,
// the latest assistant turn's thinking cannot be changed, blocks of a model the requested one cannot
// read are dropped silently, and on prefix-bound models (Claude Sonnet 5.5 and the test models) a
// block is valid only while everything before it is as it was when it was produced.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { makeClient, rejection, TOOLS } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

type Block = Anthropic.ContentBlockParam;
type Msg = Anthropic.MessageParam;
const client = makeClient();
const SYSTEM = "You are a careful assistant.";

async function send(
  messages: Msg[],
  extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {},
): Promise<Anthropic.Message> {
  return client.messages.create({
    model: "offline-200k",
    max_tokens: 4_000,
    system: SYSTEM,
    tools: TOOLS,
    messages,
    ...extra,
  });
}
async function refusal(
  messages: Msg[],
  extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {},
): Promise<string> {
  const error = await rejection(send(messages, extra));
  expect(error.status).toBe(400);
  return (error.error as { error: { message: string } }).error.message;
}
const asParams = (message: Anthropic.Message): Block[] => message.content as unknown as Block[];
const thinkingOf = (content: readonly Block[]) =>
  content.filter((b) => b.type === "thinking" || b.type === "redacted_thinking");
const withoutThinking = (content: readonly Block[]) =>
  content.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
const user = (text: string): Msg => ({ role: "user", content: text });
const BOUND = "Invalid `signature` in `thinking` block. The block is bound to a different conversation.";
const MODIFIED = "blocks in the latest assistant message cannot be modified";

/** Three turns, each reply with one thinking block. */
async function threeTurns(): Promise<{ history: Msg[]; replies: Block[][] }> {
  const history: Msg[] = [];
  const replies: Block[][] = [];
  for (const prompt of [
    "First question about rivers.",
    "Second question about bridges.",
    "Third question about valleys.",
  ]) {
    history.push(user(prompt));
    const reply = asParams(await send(history));
    expect(thinkingOf(reply)).toHaveLength(1);
    replies.push(reply);
    history.push({ role: "assistant", content: reply });
  }
  history.push(user("Fourth question."));
  return { history, replies };
}
/** The history with the thinking of the given replies (0-based) removed. */
const strip = (history: Msg[], replies: number[]) =>
  history.map((m, i) =>
    m.role === "assistant" && replies.includes((i - 1) / 2)
      ? { ...m, content: withoutThinking(m.content as Block[]) }
      : m,
  );

describe("signatures", () => {
  it("accepts a tool loop echoed verbatim, and refuses a tampered, cut or emptied signature", async () => {
    const first = asParams(await send([user('Read it.\n@tool read_file {"path":"a.ts"}')]));
    const call = first.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlockParam;
    const loop = (content: Block[]): Msg[] => [
      user('Read it.\n@tool read_file {"path":"a.ts"}'),
      { role: "assistant", content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "ok" }] },
    ];
    expect((await send(loop(first))).stop_reason).toBe("end_turn");
    const sig = (first[0] as Anthropic.ThinkingBlockParam).signature;
    const edit = (signature: string) => [{ ...first[0], signature } as Block, ...first.slice(1)];
    const tampered = sig.slice(0, 20) + (sig[20] === "A" ? "B" : "A") + sig.slice(21);
    for (const bad of [tampered, sig.slice(0, -8), ""]) {
      expect(await refusal(loop(edit(bad)))).toBe("messages.1.content.0: Invalid `signature` in `thinking` block");
    }
  });

  it("refuses edited, reordered or partly removed thinking in the latest assistant turn; empty text and full removal are fine", async () => {
    const prompt = user('Read it.\n@tool read_file {"path":"a.ts"}');
    const first = asParams(await send([prompt], { thinking: { type: "adaptive", display: "summarized" } }));
    const [reasoning, progress] = thinkingOf(first) as Anthropic.ThinkingBlockParam[];
    expect(reasoning.thinking).toMatch(/^Considering the request: "Read it\."/);
    expect(progress.thinking).toBe("Calling 1 tool: read_file.");
    const call = first.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlockParam;
    const loop = (content: Block[]): Msg[] => [
      prompt,
      { role: "assistant", content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "ok" }] },
    ];
    expect(await refusal(loop([{ ...reasoning, thinking: "I changed my mind." }, progress, call]))).toBe(
      "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.",
    );
    expect(await refusal(loop([progress, reasoning, call]))).toContain(MODIFIED);
    expect(await refusal(loop([reasoning, call]))).toContain(MODIFIED);
    expect((await send(loop([{ ...reasoning, thinking: "" }, { ...progress, thinking: "" }, call]))).type).toBe(
      "message",
    );
    expect((await send(loop([call]))).type).toBe("message");
  });

  it("accepts removing thinking from the start, from the end, or all of it", async () => {
    const { history } = await threeTurns();
    expect((await send(history)).type).toBe("message");
    for (const removed of [[0], [0, 1], [2], [1, 2], [0, 1, 2]])
      expect((await send(strip(history, removed))).type, `removed ${removed}`).toBe("message");
  });

  it("refuses a gap: one block removed from the middle while later ones are kept", async () => {
    const { history } = await threeTurns();
    expect(await refusal(strip(history, [1]))).toBe(
      `messages.5.content.0: ${BOUND} Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block". That setting requires the \`thinking-binding-controls-2026-08-01\` value in the \`anthropic-beta\` header.`,
    );
  });

  it("refuses blocks produced while an earlier one was gone once it is put back", async () => {
    const { history } = await threeTurns();
    const withoutFirst = strip(history, [0]);
    const fourth = asParams(await send(withoutFirst));
    const next = [...history, { role: "assistant", content: fourth } as Msg, user("Fifth question.")];
    expect(await refusal(next)).toMatch(
      /^messages\.7\.content\.0: Invalid `signature` in `thinking` block\. The block is bound/,
    );
    // Without the re-inserted block the same history is valid.
    expect((await send([...withoutFirst, { role: "assistant", content: fourth }, user("Fifth question.")])).type).toBe(
      "message",
    );
  });

  it("binds a block to the system prompt, the tools and every earlier message, but not to settings outside the prefix", async () => {
    const prompt = user('Read it.\n@tool read_file {"path":"a.ts"}');
    const first = asParams(await send([prompt]));
    const call = first.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlockParam;
    const result = (content: string): Msg => ({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: call.id, content }],
    });
    const second = asParams(await send([prompt, { role: "assistant", content: first }, result("file body")]));
    const history: Msg[] = [
      prompt,
      { role: "assistant", content: first },
      result("file body"),
      { role: "assistant", content: second },
      user("Thanks."),
    ];
    expect((await send(history)).type).toBe("message");
    // The tool result under the second reply's thinking block was shortened in place.
    const shortened = [...history];
    shortened[2] = result("file…");
    expect(await refusal(shortened)).toContain(BOUND);
    expect(await refusal(history, { system: "You are a different assistant." })).toContain(BOUND);
    expect(
      await refusal(history, { tools: [...TOOLS, { name: "write_file", input_schema: { type: "object" } }] }),
    ).toContain(BOUND);
    // Outside the prefix: max_tokens, tool_choice, effort, display, cache_control.
    expect(
      (
        await send(history, {
          max_tokens: 3_000,
          tool_choice: { type: "auto" },
          output_config: { effort: "low" },
          thinking: { type: "adaptive", display: "summarized" },
        })
      ).type,
    ).toBe("message");
    const marked = history.map((m, i) =>
      i === 0
        ? {
            role: "user" as const,
            content: [
              {
                type: "text" as const,
                text: 'Read it.\n@tool read_file {"path":"a.ts"}',
                cache_control: { type: "ephemeral" as const },
              },
            ],
          }
        : m,
    );
    expect((await send(marked)).type).toBe("message");
    // The same turns split into consecutive same-role messages are the same conversation.
    const split: Msg[] = [
      prompt,
      { role: "assistant", content: first.slice(0, 1) },
      { role: "assistant", content: first.slice(1) },
      ...history.slice(2),
    ];
    expect((await send(split)).type).toBe("message");
  });

  it("drops blocks of a model the requested one cannot read, silently and unbilled", async () => {
    const prompt = user("A question about harbors.");
    const opus = asParams(
      await client.messages.create({ model: "claude-opus-5-5", max_tokens: 4_000, messages: [prompt] }),
    );
    const sonnet5 = asParams(
      await client.messages.create({ model: "claude-sonnet-5", max_tokens: 4_000, messages: [prompt] }),
    );
    const next = (content: Block[]): Msg[] => [prompt, { role: "assistant", content }, user("And lanterns?")];
    const ask = (content: Block[]) =>
      client.messages.create({ model: "claude-sonnet-5-5", max_tokens: 4_000, messages: next(content) });
    // Claude Sonnet 5.5 cannot read Opus 5.5's thinking: the request succeeds as if it were absent.
    expect((await ask(opus)).usage.input_tokens).toBe((await ask(withoutThinking(opus))).usage.input_tokens);
    // It reads Sonnet 5's, which then counts its full reasoning as input.
    expect((await ask(sonnet5)).usage.input_tokens).toBeGreaterThan(
      (await ask(withoutThinking(sonnet5))).usage.input_tokens,
    );
  });

  it("does not bind blocks on models without the prefix check (Claude Mythos 5.1)", async () => {
    const ask = (messages: Msg[], system: string) =>
      client.messages.create({ model: "claude-mythos-5-1", max_tokens: 4_000, system, messages });
    const prompt = user("A question about meadows.");
    const reply = asParams(await ask([prompt], SYSTEM));
    expect(
      (await ask([prompt, { role: "assistant", content: reply }, user("More.")], "Another system prompt.")).type,
    ).toBe("message");
  });

  it("signs redacted_thinking data and refuses it edited", async () => {
    const prompt = user("Think it over.\n@redacted-thinking");
    const reply = asParams(await send([prompt]));
    const redacted = reply.find((b) => b.type === "redacted_thinking") as Anthropic.RedactedThinkingBlockParam;
    expect(redacted.data.length).toBeGreaterThan(40);
    const history = (content: Block[]): Msg[] => [prompt, { role: "assistant", content }, user("Go on.")];
    expect((await send(history(reply))).type).toBe("message");
    const edited = reply.map((b) => (b === redacted ? { ...redacted, data: redacted.data.slice(1) } : b));
    expect(await refusal(history(edited))).toBe("messages.1.content.1: Invalid `data` in `redacted_thinking` block");
  });
});
