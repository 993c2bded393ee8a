// Directives for the new stop reasons, continuations without prefill, server tools and stream
// errors, driven through the real SDK client.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createOfflineModelFetch, parseDirectives, resetOfflineCache } from "../../core/offline-model";
import { asksToContinue } from "../../core/offline-model/continuation";
import { HOLD_MS } from "../../core/offline-model/sse";
import { ask, makeClient, rawPost, rejection, textOf, toolUses } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const client = makeClient();
type Block = Anthropic.ContentBlockParam;
const SEARCH: Anthropic.WebSearchTool20250305 = { type: "web_search_20250305", name: "web_search" };
const FETCH: Anthropic.WebFetchTool20250910 = {
  type: "web_fetch_20250910",
  name: "web_fetch",
  citations: { enabled: true },
};
const types = (m: Anthropic.Message) => m.content.map((b) => b.type);

describe("stop directives", () => {
  it("@stop refusal: partial text, stop_reason refusal and stop_details", async () => {
    const reply = await client.messages.create(
      ask("Tell me something long about rivers and harbors.\n@stop refusal cyber"),
    );
    expect(reply.stop_reason).toBe("refusal");
    expect(reply.stop_details).toMatchObject({ type: "refusal", category: "cyber", explanation: expect.any(String) });
    expect(textOf(reply).length).toBeGreaterThan(0);
    expect(textOf(reply)).not.toContain("harbors");
    const uncategorized = await client.messages.create(ask("Hello.\n@stop refusal"));
    expect(uncategorized.stop_details).toMatchObject({ category: null });
    // model=: only that model refuses; another model (a fallback) answers the same request.
    const prompt = "Hello.\n@stop refusal cyber model=claude-sonnet-5-5";
    expect((await client.messages.create(ask(prompt, { model: "claude-sonnet-5-5" }))).stop_reason).toBe("refusal");
    expect((await client.messages.create(ask(prompt, { model: "claude-opus-5-5" }))).stop_reason).toBe("end_turn");
  });

  it("@stop model_context_window_exceeded, and a reply that crosses the window stops with it", async () => {
    const directed = await client.messages.create(ask("Hello.\n@stop model_context_window_exceeded"));
    expect(directed.stop_reason).toBe("model_context_window_exceeded");
    // input + max_tokens above the window is accepted; the output is cut where the window ends.
    const small = await client.messages.create(
      ask("@reply-chars 8000", { model: "offline-1k", max_tokens: 2_000, thinking: { type: "between_tools" } }),
    );
    expect(small.stop_reason).toBe("model_context_window_exceeded");
    expect(small.usage.input_tokens + small.usage.output_tokens).toBe(1_000);
  });

  it("@stop pause_turn with a server tool: a search and its result, then the rest once the reply is sent back", async () => {
    const prompt: Anthropic.MessageParam = {
      role: "user",
      content: "Find harbor tide tables.\n@web-search harbor tide tables\n@stop pause_turn",
    };
    const paused = await client.messages.create(ask("", { tools: [SEARCH], messages: [prompt] }));
    expect(paused.stop_reason).toBe("pause_turn");
    expect(types(paused)).toEqual(["thinking", "server_tool_use", "web_search_tool_result"]);
    const resumed = await client.messages.create(
      ask("", {
        tools: [SEARCH],
        messages: [prompt, { role: "assistant", content: paused.content as unknown as Block[] }],
      }),
    );
    expect(resumed.stop_reason).toBe("end_turn");
    const cited = resumed.content.filter((b): b is Anthropic.TextBlock => b.type === "text" && !!b.citations?.length);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited[0].citations![0]).toMatchObject({
      type: "web_search_result_location",
      url: expect.stringMatching(/^https:\/\//),
    });
    // Without a server tool the directive only leaves a note.
    const plain = await client.messages.create(ask("Hello.\n@stop pause_turn"));
    expect(plain.stop_reason).toBe("end_turn");
    expect(textOf(plain)).toContain("@stop pause_turn ignored");
  });
});

describe("continuations without prefill", () => {
  it("recognises a request to continue a cut-off reply, in its usual phrasings", () => {
    for (const text of [
      "Please continue from where you left off.",
      'Your previous response was interrupted and ended with "the tide table for March". Continue from where you left off.',
      "You got cut off - please keep going.",
      "Your last reply was truncated; please resume.",
    ])
      expect(asksToContinue(text), text).toBe(true);
    for (const text of ["Let's continue where we left off yesterday.", "Continue.", "Where did you leave the keys?"])
      expect(asksToContinue(text), text).toBe(false);
  });

  it("answers a continuation request as a continuation and reads no directives from it", async () => {
    const prompt = "Describe the old harbor in detail.\n@max-tokens-stop";
    const cut = await client.messages.create(ask(prompt));
    expect(cut.stop_reason).toBe("max_tokens");
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: prompt },
      { role: "assistant", content: cut.content as unknown as Block[] },
      {
        role: "user",
        content:
          'Your previous response was interrupted. Continue from where you left off.\n@tool read_file {"path":"x"}',
      },
    ];
    const next = await client.messages.create(ask("", { messages }));
    expect(next.stop_reason).toBe("end_turn");
    expect(toolUses(next)).toEqual([]);
    expect(textOf(next)).toBe('Noted: "Describe the old harbor in detail."');
  });

  it("refuses a prefill on current models and accepts it where the model does (Claude Haiku 4.5)", async () => {
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "Name a river." },
      { role: "assistant", content: "The river" },
    ];
    const error = await rejection(client.messages.create(ask("", { messages })));
    expect(error.status).toBe(400);
    expect((error.error as { error: { message: string } }).error.message).toBe(
      "This model does not support assistant message prefill. The conversation must end with a user message.",
    );
    const haiku = await client.messages.create(ask("", { messages, model: "claude-haiku-4-5" }));
    expect(haiku.stop_reason).toBe("end_turn");
  });
});

describe("server tools", () => {
  it("@web-search: server_tool_use, web_search_tool_result with sealed results, cited text, counted in usage", async () => {
    const reply = await client.messages.create(
      ask("Look it up.\n@web-search lantern festival dates", { tools: [SEARCH] }),
    );
    expect(types(reply)).toEqual(["thinking", "server_tool_use", "web_search_tool_result", "text", "text", "text"]);
    const use = reply.content[1] as Anthropic.ServerToolUseBlock;
    expect(use).toMatchObject({ name: "web_search", input: { query: "lantern festival dates" } });
    expect(use.id).toMatch(/^srvtoolu_/);
    const result = reply.content[2] as Anthropic.WebSearchToolResultBlock;
    expect(result.tool_use_id).toBe(use.id);
    const hits = result.content as Anthropic.WebSearchResultBlock[];
    expect(hits).toHaveLength(3);
    expect(hits[0]).toMatchObject({
      type: "web_search_result",
      url: expect.stringMatching(/^https:\/\//),
      encrypted_content: expect.any(String),
    });
    expect(reply.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    // Sent back as it came, the turn is valid; an edited result or citation is refused.
    const history = (content: Block[]): Anthropic.MessageParam[] => [
      { role: "user", content: "Look it up.\n@web-search lantern festival dates" },
      { role: "assistant", content },
      { role: "user", content: "Thanks." },
    ];
    const content = reply.content as unknown as Block[];
    expect((await client.messages.create(ask("", { tools: [SEARCH], messages: history(content) }))).type).toBe(
      "message",
    );
    const editedResult = content.map((b, i) =>
      i === 2
        ? {
            ...b,
            content: hits.map((h, k) => (k === 0 ? { ...h, encrypted_content: h.encrypted_content.slice(2) } : h)),
          }
        : b,
    ) as Block[];
    const badResult = await rejection(
      client.messages.create(ask("", { tools: [SEARCH], messages: history(editedResult) })),
    );
    expect((badResult.error as { error: { message: string } }).error.message).toBe(
      "messages.1.content.2: Invalid encrypted_content in search_result block",
    );
    const cited = content[4] as Anthropic.TextBlockParam;
    const editedCitation = content.map((b, i) =>
      i === 4 ? { ...cited, citations: cited.citations!.map((c) => ({ ...c, encrypted_index: "AAAA" })) } : b,
    ) as Block[];
    const badCitation = await rejection(
      client.messages.create(ask("", { tools: [SEARCH], messages: history(editedCitation) })),
    );
    expect((badCitation.error as { error: { message: string } }).error.message).toBe(
      "messages.1.content.4: Invalid encrypted_index in web_search_result_location citation",
    );
  });

  it("answers a search past max_uses with a max_uses_exceeded error result, not billed", async () => {
    const reply = await client.messages.create(
      ask("Two searches.\n@web-search tides\n@web-search currents", { tools: [{ ...SEARCH, max_uses: 1 }] }),
    );
    const results = reply.content.filter(
      (b): b is Anthropic.WebSearchToolResultBlock => b.type === "web_search_tool_result",
    );
    expect(results).toHaveLength(2);
    expect(results[1].content).toEqual({ type: "web_search_tool_result_error", error_code: "max_uses_exceeded" });
    expect(reply.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });

  it("@web-fetch: a web_fetch_tool_result holding a text document; without the tool only a note", async () => {
    const reply = await client.messages.create(
      ask("Read the page.\n@web-fetch https://example.com/tides", { tools: [FETCH] }),
    );
    const result = reply.content.find((b) => b.type === "web_fetch_tool_result") as Anthropic.WebFetchToolResultBlock;
    expect(result.content).toMatchObject({
      type: "web_fetch_result",
      url: "https://example.com/tides",
      content: { type: "document", source: { type: "text", media_type: "text/plain" } },
    });
    expect(reply.usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 1 });
    const without = await client.messages.create(ask("Read the page.\n@web-fetch https://example.com/tides"));
    expect(types(without)).toEqual(["thinking", "text"]);
    expect(textOf(without)).toContain("no web_fetch tool in the request");
  });

  it("streams server tool blocks and citations so the SDK rebuilds the same message", async () => {
    const params = ask("Look it up.\n@web-search lantern festival dates", { tools: [SEARCH] });
    const streamed = await client.messages.stream(params).finalMessage();
    const plain = await client.messages.create(params);
    // Same blocks; only the ids (made from each request's bytes, streamed or not) differ.
    const sameIds = (m: Anthropic.Message) =>
      JSON.parse(JSON.stringify(m.content).replace(/srvtoolu_\w+/g, "srvtoolu_x"));
    expect(sameIds(streamed)).toEqual(sameIds(plain));
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });
});

describe("@stream-error", () => {
  it("parses its options", () => {
    expect(parseDirectives("@stream-error overloaded_error after=50 attempts=1").streamError).toEqual({
      type: "overloaded_error",
      after: 50,
      attempts: 1,
    });
    expect(parseDirectives("@stream-error api_error").streamError).toEqual({
      type: "api_error",
      after: 200,
      attempts: null,
    });
  });

  it("answers 200, streams about N characters, then an error event the SDK raises; attempts=K lets a retry through", async () => {
    const params = ask("@reply-chars 2000\nTell me about rivers.\n@stream-error overloaded_error after=300 attempts=1");
    const stream = client.messages.stream(params);
    let text = "";
    stream.on("text", (delta) => (text += delta));
    const error = await rejection(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error.status).toBeUndefined();
    expect((error.error as { error: { type: string } }).error.type).toBe("overloaded_error");
    expect(text.length).toBeGreaterThanOrEqual(300);
    expect(text.length).toBeLessThan(360);
    // The client retries the same request: this time it succeeds.
    const retried = await client.messages.stream(params).finalMessage();
    expect(retried.stop_reason).toBe("end_turn");
    expect(textOf(retried).startsWith(text)).toBe(true);
  });

  it("fails a non-streamed request with the HTTP error instead, which the SDK retries", async () => {
    const retrying = new Anthropic({
      apiKey: "offline",
      baseURL: "https://offline-model.invalid",
      fetch: createOfflineModelFetch(),
      maxRetries: 1,
    });
    const params = ask("Hello.\n@stream-error api_error attempts=1");
    const reply = await retrying.messages.create(params);
    expect(reply.stop_reason).toBe("end_turn");
    resetOfflineCache();
    const error = await rejection(client.messages.create(params));
    expect(error.status).toBe(500);
    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
  });
});

/** Reads a streamed reply's text deltas as they come; `done` once the body ends. */
function reading(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const state = { text: "", done: false, reader };
  const pump = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return void (state.done = true);
      for (const m of decoder.decode(value).matchAll(/"type":"text_delta","text":("(?:[^"\\]|\\.)*")/g))
        state.text += JSON.parse(m[1]);
    }
  })();
  return { state, pump };
}
/** Lets the stream's pending reads and pulls run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe("@hold-stream", () => {
  it("parses its option", () => {
    expect(parseDirectives("@hold-stream after=120").holdAfter).toBe(120);
    expect(parseDirectives("@hold-stream").holdAfter).toBe(0);
    expect(parseDirectives("hello").holdAfter).toBeNull();
  });

  it("holds the stream after about N characters until the reader cancels it, or until the hold runs out", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const body = { ...ask("@reply-chars 1500\nTell me about rivers.\n@hold-stream after=200"), stream: true };
      const cancelled = reading(await rawPost(body));
      await settle();
      expect(cancelled.state.done).toBe(false);
      expect(cancelled.state.text.length).toBeGreaterThanOrEqual(200);
      expect(cancelled.state.text.length).toBeLessThan(260);
      await cancelled.state.reader.cancel();
      await cancelled.pump;
      expect(cancelled.state.done).toBe(true);

      resetOfflineCache();
      const waited = reading(await rawPost(body));
      await settle();
      await vi.advanceTimersByTimeAsync(HOLD_MS - 1);
      await settle();
      expect(waited.state.done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await waited.pump;
      expect(waited.state.text.length).toBeGreaterThan(1000);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("@stream-pace", () => {
  it("parses its milliseconds, capped at 2,000", () => {
    expect(parseDirectives("@stream-pace 150").paceMs).toBe(150);
    expect(parseDirectives("@stream-pace 99999").paceMs).toBe(2000);
    expect(parseDirectives("hello").paceMs).toBeNull();
  });

  it("sends each text delta that long after the one before it, the whole reply in the end", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const body = { ...ask("@reply-chars 300\nTell me about tides.\n@stream-pace 1000"), stream: true };
      const { state, pump } = reading(await rawPost(body));
      await settle();
      // Nothing of the text before the first pace has passed.
      expect(state.text).toBe("");
      await vi.advanceTimersByTimeAsync(1000);
      await settle();
      const first = state.text.length;
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThanOrEqual(40);
      await vi.advanceTimersByTimeAsync(1000);
      await settle();
      expect(state.text.length).toBeGreaterThan(first);
      expect(state.text.length).toBeLessThanOrEqual(80);
      await vi.advanceTimersByTimeAsync(60_000);
      await pump;
      expect(state.done).toBe(true);
      expect(state.text.length).toBeGreaterThan(250);
    } finally {
      vi.useRealTimers();
    }
  });
});
