// Offline model prompt caching: writes and reads, the model's minimum (512 tokens on the test models, as
// on Claude Sonnet 5.5), the 5-minute lifetime,
// the 20-block lookback and the 4-breakpoint limit, as the real API does.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { countRequestTokens } from "../../core/tokens";
import { ask, makeClient, type Params, rejection, TOOLS } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

describe("prompt caching", () => {
  const policy = Array.from({ length: 150 }, (_, i) => `Policy ${i}: keep summaries short and cite ids.`).join("\n");
  const cachedTools: Anthropic.Tool[] = [{ ...TOOLS[0], cache_control: { type: "ephemeral" } }];
  const cachedSystem: Anthropic.TextBlockParam[] = [
    { type: "text", text: policy, cache_control: { type: "ephemeral" } },
  ];
  const withCache = (question: string): Params => ask(question, { tools: cachedTools, system: cachedSystem });

  function clock(start = 1_700_000_000_000) {
    let t = start;
    return { now: () => t, advance: (ms: number) => void (t += ms) };
  }

  it("writes on the first request and reads on the second", async () => {
    const client = makeClient({ now: clock().now });
    const first = await client.messages.create(withCache("First question?"));
    const created = first.usage.cache_creation_input_tokens ?? -1;
    expect(created).toBeGreaterThan(1_024);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.input_tokens + created).toBe(countRequestTokens(withCache("First question?")));

    const second = await client.messages.create(withCache("A different second question?"));
    const read = second.usage.cache_read_input_tokens ?? -1;
    expect(read).toBe(created);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens + read).toBe(countRequestTokens(withCache("A different second question?")));
  });

  it("writes at a breakpoint on a block inside a tool result, as at one on the result itself", async () => {
    const found = Array.from({ length: 600 }, (_, i) => `row ${i}: a found record`).join("\n");
    const loop = (cached: "nested" | "result"): Params =>
      ask("Look it up.", {
        tools: TOOLS,
        messages: [
          { role: "user", content: "Look it up." },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: TOOLS[0].name, input: {} }] },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_1",
                content: [
                  {
                    type: "text",
                    text: found,
                    ...(cached === "nested" ? { cache_control: { type: "ephemeral" } } : {}),
                  },
                ],
                ...(cached === "result" ? { cache_control: { type: "ephemeral" } } : {}),
              },
            ],
          },
        ],
      });
    const nested = await makeClient({ now: clock().now }).messages.create(loop("nested"));
    resetOfflineCache();
    const onResult = await makeClient({ now: clock().now }).messages.create(loop("result"));
    expect(nested.usage.cache_creation_input_tokens).toBeGreaterThan(1_024);
    expect(nested.usage.cache_creation_input_tokens).toBe(onResult.usage.cache_creation_input_tokens);
  });

  it("reports cache usage in streamed messages too", async () => {
    const client = makeClient({ now: clock().now });
    await client.messages.create(withCache("Warm the cache."));
    const streamed = await client.messages.stream(withCache("Now stream.")).finalMessage();
    expect(streamed.usage.cache_read_input_tokens).toBeGreaterThan(1_024);
  });

  it("does not cache prefixes under the model's minimum", async () => {
    const client = makeClient({ now: clock().now });
    const small = ask("Hi", { system: [{ type: "text", text: "Short rules.", cache_control: { type: "ephemeral" } }] });
    for (let i = 0; i < 2; i++) {
      const message = await client.messages.create(small);
      expect(message.usage.cache_creation_input_tokens).toBe(0);
      expect(message.usage.cache_read_input_tokens).toBe(0);
      expect(message.usage.input_tokens).toBe(countRequestTokens(small));
    }
  });

  it("expires after 5 minutes, and each hit refreshes the lifetime", async () => {
    const time = clock();
    const client = makeClient({ now: time.now });
    await client.messages.create(withCache("one"));
    time.advance(4 * 60_000);
    expect((await client.messages.create(withCache("two"))).usage.cache_read_input_tokens).toBeGreaterThan(0);
    time.advance(4 * 60_000); // 8 minutes after the write, 4 after the refreshing hit
    expect((await client.messages.create(withCache("three"))).usage.cache_read_input_tokens).toBeGreaterThan(0);
    time.advance(5 * 60_000 + 1);
    const expired = await client.messages.create(withCache("four"));
    expect(expired.usage.cache_read_input_tokens).toBe(0);
    expect(expired.usage.cache_creation_input_tokens).toBeGreaterThan(1_024);
  });

  it("reads the previous turn's prefix when the breakpoint moves forward (20-block lookback)", async () => {
    const client = makeClient({ now: clock().now });
    const turn1: Params = {
      model: "offline-200k",
      max_tokens: 1_000,
      system: policy,
      messages: [
        { role: "user", content: [{ type: "text", text: "Question one.", cache_control: { type: "ephemeral" } }] },
      ],
    };
    const first = await client.messages.create(turn1);
    const turn2: Params = {
      ...turn1,
      messages: [
        { role: "user", content: [{ type: "text", text: "Question one." }] },
        // Earlier turns' thinking may be left out; kept, it would count its full reasoning as input.
        { role: "assistant", content: first.content.filter((block) => block.type !== "thinking") },
        { role: "user", content: [{ type: "text", text: "Question two.", cache_control: { type: "ephemeral" } }] },
      ],
    };
    const second = await client.messages.create(turn2);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(
      countRequestTokens(turn2) - countRequestTokens(turn1) - second.usage.input_tokens,
    );
    expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it("rejects more than 4 breakpoints like the real API", async () => {
    const marked = (text: string): Anthropic.TextBlockParam => ({
      type: "text",
      text,
      cache_control: { type: "ephemeral" },
    });
    const error = await rejection(
      makeClient().messages.create(ask("hi", { system: ["a", "b", "c", "d", "e"].map(marked) })),
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.message).toContain("A maximum of 4 blocks with cache_control may be provided. Found 5.");
  });
});
