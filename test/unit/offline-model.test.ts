// The offline model is exercised only through the real Anthropic SDK (or raw
// fetch for wire-level checks), so these tests also prove the SDK accepts it.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { createOfflineModelFetch, handleMessagesRequest, resetOfflineCache, type OfflineModelOptions } from "../../core/offline-model";
import { turnStateSystemPrompt } from "../../core/compactor";
import { countRequestTokens } from "../../core/tokens";

type Params = Anthropic.MessageCreateParamsNonStreaming;
const BASE_URL = "https://offline-model.invalid";

function makeClient(options: OfflineModelOptions = {}): Anthropic {
  return new Anthropic({ apiKey: "offline", baseURL: BASE_URL, fetch: createOfflineModelFetch(options), maxRetries: 0 });
}

function ask(text: string, extra: Partial<Params> = {}): Params {
  return { model: "offline", max_tokens: 4_096, messages: [{ role: "user", content: text }], ...extra };
}

function textOf(message: Anthropic.Message): string {
  return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
}

function toolUses(message: Anthropic.Message): Anthropic.ToolUseBlock[] {
  return message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
}

type APIError = InstanceType<typeof Anthropic.APIError>;

async function rejection(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    return error as APIError;
  }
  throw new Error("expected the request to fail");
}

interface ErrorBody {
  type: string;
  error: { type: string; message: string };
}

async function errorBody(response: Response): Promise<ErrorBody> {
  return (await response.json()) as ErrorBody;
}

async function rawPost(body: unknown, path = "/v1/messages"): Promise<Response> {
  return handleMessagesRequest(new Request(BASE_URL + path, { method: "POST", body: JSON.stringify(body) }));
}

const TOOLS: Anthropic.Tool[] = [
  { name: "read_file", description: "Read a file", input_schema: { type: "object", properties: { path: { type: "string" } } } },
];

beforeEach(() => resetOfflineCache());

describe("plain replies", () => {
  it("quotes the start of the user's text and reports uncached usage", async () => {
    const params = ask("Find invoice INV-2024-0042 in the March ledger please.");
    const message = await makeClient().messages.create(params);
    expect(message.type).toBe("message");
    expect(message.role).toBe("assistant");
    expect(message.id).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
    expect(textOf(message)).toBe('Noted: "Find invoice INV-2024-0042 in the March ledger please."');
    expect(message.stop_reason).toBe("end_turn");
    expect(message.stop_sequence).toBeNull();
    expect(message.usage.input_tokens).toBe(countRequestTokens(params));
    expect(message.usage.cache_read_input_tokens).toBe(0);
    expect(message.usage.cache_creation_input_tokens).toBe(0);
    expect(message.usage.output_tokens).toBeGreaterThan(5);
  });

  it("is deterministic: identical requests give identical messages, different ones differ", async () => {
    const client = makeClient();
    const a = await client.messages.create(ask("@reply-chars 500\nTell me about rivers."));
    const b = await client.messages.create(ask("@reply-chars 500\nTell me about rivers."));
    const c = await client.messages.create(ask("@reply-chars 500\nTell me about forests."));
    expect(b).toEqual(a);
    expect(textOf(c)).not.toBe(textOf(a));
    expect(c.id).not.toBe(a.id);
  });

  it("@reply-chars 3000 gives 2970–3030 chars of varied prose in paragraphs", async () => {
    const message = await makeClient().messages.create(ask("@reply-chars 3000"));
    const text = textOf(message);
    expect(text.length).toBeGreaterThanOrEqual(2970);
    expect(text.length).toBeLessThanOrEqual(3030);
    expect(text).toContain("\n\n");
    expect(new Set(text.toLowerCase().match(/[a-z]+/g)).size).toBeGreaterThan(50);
    expect(text).not.toContain("@reply-chars");
  });

  it("serves count_tokens with the same count the model bills", async () => {
    const params = ask("How many tokens is this?", { system: "Be brief." });
    const counted = await makeClient().messages.countTokens({ model: params.model, system: params.system, messages: params.messages });
    expect(counted.input_tokens).toBe(countRequestTokens(params));
  });
});

describe("streaming", () => {
  it("streams many text deltas that concatenate to the final text", async () => {
    const client = makeClient();
    const stream = client.messages.stream(ask("@reply-chars 2000\nStream this."));
    const deltas: string[] = [];
    stream.on("text", (delta) => deltas.push(delta));
    const final = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThanOrEqual(2000 / 40);
    for (const delta of deltas) expect(delta.length).toBeLessThanOrEqual(41);
    expect(deltas.join("")).toBe(textOf(final));
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBeGreaterThan(100);
    // Same prose as the JSON mode for the same user text.
    const json = await client.messages.create(ask("@reply-chars 2000\nStream this."));
    expect(textOf(final)).toBe(textOf(json));
  });

  it("emits Anthropic's exact event sequence and framing, identically for identical requests", async () => {
    const body = { ...ask('Look.\n@tool read_file {"path":"notes/today.md"}', { tools: TOOLS }), stream: true };
    const response = await rawPost(body);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const raw = await response.text();
    const frames = raw.split("\n\n").filter(Boolean);
    for (const frame of frames) expect(frame).toMatch(/^event: [a-z_]+\ndata: \{.*\}$/s);
    const names = frames.map((frame) => frame.slice("event: ".length, frame.indexOf("\n")));
    expect(names.join(" ")).toMatch(
      /^message_start ping (content_block_start (content_block_delta )+content_block_stop ){2}message_delta message_stop$/,
    );
    const data = frames.map((frame) => JSON.parse(frame.slice(frame.indexOf("data: ") + 6)));
    expect(data.some((d) => d.delta?.type === "input_json_delta")).toBe(true);
    expect(data.at(-2).delta.stop_reason).toBe("tool_use");
    expect(await (await rawPost(body)).text()).toBe(raw);
  });

  it("streams tool_use input as JSON deltas that the SDK reassembles", async () => {
    const final = await makeClient()
      .messages.stream(ask('@tool read_file {"path":"src/a-very-long-directory-name/and/a/long/file-name.ts","lines":[1,200]}', { tools: TOOLS }))
      .finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    expect(toolUses(final).map((t) => t.input)).toEqual([
      { path: "src/a-very-long-directory-name/and/a/long/file-name.ts", lines: [1, 200] },
    ]);
  });
});

describe("tool directives", () => {
  it("turns @tool lines into tool_use blocks with parsed input", async () => {
    const message = await makeClient().messages.create(
      ask('Check two files.\n@tool read_file {"path":"a.ts"}\n@tool read_file {"path":"b.ts"}', { tools: TOOLS }),
    );
    expect(message.stop_reason).toBe("tool_use");
    const calls = toolUses(message);
    expect(calls.map((c) => [c.name, c.input])).toEqual([
      ["read_file", { path: "a.ts" }],
      ["read_file", { path: "b.ts" }],
    ]);
    expect(calls[0].id).toMatch(/^toolu_01[0-9A-Za-z]{22}$/);
    expect(calls[1].id).not.toBe(calls[0].id);
    expect(message.content[0].type).toBe("text");
  });

  it("sends {} with a note for bad JSON, and still calls tools missing from `tools`", async () => {
    const message = await makeClient().messages.create(ask("@tool read_file {path: oops}\n@tool not_registered", { tools: TOOLS }));
    expect(toolUses(message).map((c) => [c.name, c.input])).toEqual([
      ["read_file", {}],
      ["not_registered", {}],
    ]);
    expect(textOf(message)).toContain("not valid JSON");
  });

  it("reports tool results and does not re-issue the calls after a tool_result turn", async () => {
    const client = makeClient();
    const first: Params = ask('@tool read_file {"path":"a.ts"}\n@tool read_file {"path":"b.ts"}', { tools: TOOLS });
    const calling = await client.messages.create(first);
    const results: Anthropic.ToolResultBlockParam[] = toolUses(calling).map((call) => ({
      type: "tool_result",
      tool_use_id: call.id,
      content: "x".repeat(25_012),
    }));
    const followUp = await client.messages.create({
      ...first,
      messages: [...first.messages, { role: "assistant", content: calling.content }, { role: "user", content: results }],
    });
    expect(toolUses(followUp)).toEqual([]);
    expect(followUp.stop_reason).toBe("end_turn");
    expect(textOf(followUp)).toBe("Read 2 tool results (25,012 and 25,012 chars).");
  });
});

describe("@tools-per-step", () => {
  /** Runs a @tools-per-step turn whose first results carry a turn state with `remaining`; returns the calls issued. */
  async function batchTurn(remaining: string): Promise<unknown[]> {
    const client = makeClient();
    const first: Params = ask('Read all.\n@tools-per-step 2\n@tool read_file {"path":"file-a1"}\n@tool read_file {"path":"file-b2"}\n@tool read_file {"path":"file-c3"}', { tools: TOOLS });
    const messages: Anthropic.MessageParam[] = [...first.messages];
    const issued: unknown[] = [];
    for (let step = 0; step < 4; step++) {
      const reply = await client.messages.create({ ...first, messages });
      const calls = toolUses(reply);
      issued.push(...calls.map((c) => c.input));
      messages.push({ role: "assistant", content: reply.content });
      if (!calls.length) {
        expect(reply.stop_reason).toBe("end_turn");
        break;
      }
      const results: Anthropic.ContentBlockParam[] = calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "ok" }));
      // The second carrier also holds a compaction's continuation nudge: not user text.
      if (step === 0) results.push({ type: "text", text: `<turn_state>\nTASK:\n- read all\nREMAINING:\n${remaining}\nDATA:\n- file-a1 and file-b2 read\n</turn_state>` });
      messages.push({ role: "user", content: results });
    }
    return issued;
  }

  it("issues the calls a batch per step, resuming after a compaction nudge from its REMAINING, then reports", async () => {
    expect(await batchTurn("- file-c3")).toEqual([{ path: "file-a1" }, { path: "file-b2" }, { path: "file-c3" }]);
  });

  it("resumes only from what the turn state says: a wrong REMAINING redoes or skips work", async () => {
    expect(await batchTurn("- file-a1, file-c3")).toEqual([{ path: "file-a1" }, { path: "file-b2" }, { path: "file-a1" }, { path: "file-c3" }]);
    expect(await batchTurn("- nothing left")).toEqual([{ path: "file-a1" }, { path: "file-b2" }]);
  });
});

describe("max_tokens", () => {
  it("truncates a long reply to max_tokens with stop_reason max_tokens", async () => {
    const client = makeClient();
    const full = textOf(await client.messages.create(ask("@reply-chars 3000")));
    const cut = await client.messages.create(ask("@reply-chars 3000", { max_tokens: 50 }));
    expect(cut.stop_reason).toBe("max_tokens");
    expect(cut.usage.output_tokens).toBeLessThanOrEqual(50);
    expect(cut.usage.output_tokens).toBeGreaterThanOrEqual(45);
    expect(full.startsWith(textOf(cut))).toBe(true);
    expect(textOf(cut).length).toBeLessThan(full.length);
  });

  it("@max-tokens-stop forces max_tokens and carries no tool calls", async () => {
    const message = await makeClient().messages.create(ask('@max-tokens-stop\n@tool read_file {"path":"a.ts"}', { tools: TOOLS }));
    expect(message.stop_reason).toBe("max_tokens");
    expect(toolUses(message)).toEqual([]);
  });
});

describe("errors", () => {
  const longText = "The ledger reconciliation notes continue here with more words. ".repeat(150);

  it("rejects prompts over the window with the exact message as Anthropic.BadRequestError", async () => {
    const params = ask(longText, { model: "offline-1k" });
    const error = await rejection(makeClient().messages.create(params));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: `prompt is too long: ${countRequestTokens(params)} tokens > 1000 maximum` },
    });
  });

  it("uses 200,000 by default and honours per-model window overrides", async () => {
    const params = ask(longText, { model: "claude-sonnet-4-5" });
    await expect(makeClient().messages.create(params)).resolves.toMatchObject({ type: "message" });
    const error = await rejection(makeClient({ windows: { "claude-sonnet-4-5": 500 } }).messages.create(params));
    expect((error.error as { error: { message: string } }).error.message).toBe(
      `prompt is too long: ${countRequestTokens(params)} tokens > 500 maximum`,
    );
  });

  it.each([
    [429, Anthropic.RateLimitError, "rate_limit_error"],
    [529, Anthropic.OverloadedError, "overloaded_error"],
    [500, Anthropic.InternalServerError, "api_error"],
    [400, Anthropic.BadRequestError, "invalid_request_error"],
  ] as const)("@model-error %i surfaces as the SDK's error class", async (status, errorClass, type) => {
    const error = await rejection(makeClient().messages.create(ask(`Hello.\n@model-error ${status}`)));
    expect(error).toBeInstanceOf(errorClass);
    expect(error.status).toBe(status);
    expect(error.error).toMatchObject({ type: "error", error: { type } });
    if (status === 500) expect(error).not.toBeInstanceOf(Anthropic.OverloadedError);
    expect(error.headers?.get("retry-after")).toBe(status === 429 ? "1" : null);
  });

  it("names the missing field, and answers 404 off the messages route", async () => {
    const missing = await rawPost({ model: "offline", messages: [{ role: "user", content: "hi" }] });
    expect(missing.status).toBe(400);
    expect(await errorBody(missing)).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringMatching(/^max_tokens/) } });
    const empty = await rawPost({ model: "offline", max_tokens: 5, messages: [] });
    expect((await errorBody(empty)).error.message).toMatch(/^messages/);
    const notFound = await rawPost(ask("hi"), "/v1/complete");
    expect(notFound.status).toBe(404);
    expect((await errorBody(notFound)).error.type).toBe("not_found_error");
  });
});

describe("prompt caching", () => {
  const policy = Array.from({ length: 150 }, (_, i) => `Policy ${i}: keep summaries short and cite ids.`).join("\n");
  const cachedTools: Anthropic.Tool[] = [{ ...TOOLS[0], cache_control: { type: "ephemeral" } }];
  const cachedSystem: Anthropic.TextBlockParam[] = [{ type: "text", text: policy, cache_control: { type: "ephemeral" } }];
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
    expect(second.usage.input_tokens + read).toBe(
      countRequestTokens(withCache("A different second question?")),
    );
  });

  it("reports cache usage in streamed messages too", async () => {
    const client = makeClient({ now: clock().now });
    await client.messages.create(withCache("Warm the cache."));
    const streamed = await client.messages.stream(withCache("Now stream.")).finalMessage();
    expect(streamed.usage.cache_read_input_tokens).toBeGreaterThan(1_024);
  });

  it("does not cache prefixes under the 1,024-token minimum", async () => {
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
      model: "offline",
      max_tokens: 1_000,
      system: policy,
      messages: [{ role: "user", content: [{ type: "text", text: "Question one.", cache_control: { type: "ephemeral" } }] }],
    };
    const first = await client.messages.create(turn1);
    const turn2: Params = {
      ...turn1,
      messages: [
        { role: "user", content: [{ type: "text", text: "Question one." }] },
        { role: "assistant", content: first.content },
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
    const marked = (text: string): Anthropic.TextBlockParam => ({ type: "text", text, cache_control: { type: "ephemeral" } });
    const error = await rejection(makeClient().messages.create(ask("hi", { system: ["a", "b", "c", "d", "e"].map(marked) })));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.message).toContain("A maximum of 4 blocks with cache_control may be provided. Found 5.");
  });
});

describe("summarization requests", () => {
  const HEADINGS = ["TASK", "PROGRESS", "REMAINING", "DATA", "DECISIONS"];
  // The compactor's real state prompt: the offline model reads its cap and headings from the text.
  const system = (cap: number) => turnStateSystemPrompt(cap);
  const conversation: Anthropic.MessageParam[] = [
    { role: "user", content: "Reconcile invoice INV-2024-0042 against ledger.csv. Start with March." },
    { role: "assistant", content: "Read 2 tool results (25,012 and 25,012 chars)." },
    { role: "user", content: "We decided to use the March total of 18,250 dollars. Keep going." },
    { role: "assistant", content: "Noted the decision." },
    { role: "user", content: "Next, draft report.pdf for account acct_7781.\n@tool read_file {\"path\":\"x\"}" },
  ];

  it("reads a fold prompt's pasted transcript as the conversation it quotes, carrying the previous summary", async () => {
    const { buildFoldRequest } = await import("../../core/fold");
    const at = "2026-01-01T00:00:00Z";
    const folded = [
      { id: "m1", seq: 7, role: "user" as const, createdAt: at, content: [{ type: "text" as const, text: "Book the flight to Oslo on FL-2291. Window seat please." }] },
      { id: "m2", seq: 8, role: "assistant" as const, createdAt: at, content: [{ type: "text" as const, text: "Booked FL-2291 with seat 14A." }] },
    ];
    const previous = "- Plan the Norway trip in June.\n\nIdentifiers:\n- trip_0042";
    const request = buildFoldRequest({ model: "offline", previousSummary: previous, folded, maxChars: 1_000 });
    const message = await makeClient().messages.create(request as unknown as Params);
    const text = textOf(message);
    expect(text).not.toMatch(/previous_summary|new_messages|\[seq \d+/);
    expect(text).toContain("- Plan the Norway trip in June.");
    expect(text).toContain("- Book the flight to Oslo on FL-2291.");
    expect(text).toContain("- Booked FL-2291 with seat 14A.");
    expect(text).toMatch(/Identifiers:\n- trip_0042, FL-2291/);
  });

  it("produces an extractive summary with every section, within the cap", async () => {
    const message = await makeClient().messages.create({ model: "offline", max_tokens: 2_000, system: system(700), messages: conversation, tools: TOOLS });
    const text = textOf(message);
    expect(text.length).toBeLessThanOrEqual(700);
    expect(toolUses(message)).toEqual([]);
    const positions = HEADINGS.map((heading) => text.indexOf(`${heading}:\n`));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const section = (heading: string) => text.slice(text.indexOf(`${heading}:\n`)).split("\n\n")[0];
    expect(section("TASK")).toContain("Reconcile invoice INV-2024-0042 against ledger.csv.");
    expect(section("REMAINING")).toContain("Next, draft report.pdf for account acct_7781.");
    expect(section("DECISIONS")).toContain("We decided to use the March total of 18,250 dollars.");
    for (const id of ["INV-2024-0042", "ledger.csv", "18,250", "report.pdf", "acct_7781"]) expect(section("DATA")).toContain(id);
  });

  it("never exceeds a tight cap and keeps all headings when they fit", async () => {
    const message = await makeClient().messages.create({ model: "offline", max_tokens: 2_000, system: system(120), messages: conversation });
    const text = textOf(message);
    expect(text.length).toBeLessThanOrEqual(120);
    for (const heading of HEADINGS) expect(text).toContain(`${heading}:`);
  });

  it("cuts even the headings when the cap is smaller than they are", async () => {
    const message = await makeClient().messages.create({ model: "offline", max_tokens: 2_000, system: system(20), messages: conversation });
    expect(textOf(message).length).toBeLessThanOrEqual(20);
    expect(textOf(message)).toMatch(/^TASK:/);
  });
});
