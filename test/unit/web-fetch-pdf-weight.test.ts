// A web_fetch of a PDF as the real API returns it: the fetched PDF is a document block with a base64
// source (docs web-fetch-tool: "For PDF documents, the content will be returned as base64-encoded
// data"; SDK DocumentBlock.source: Base64PDFSource | PlainTextSource), and the API counts at most
// max_content_tokens (20,000 here) of it. The platform weighs it by what the API counts, never by
// the length of its base64.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { type ToolContext, ToolRegistry } from "../../agent/tools/registry";
import { TurnCompactor } from "../../agent/turn-compaction";
import { runAgentTurn } from "../../agent/turn-loop";
import { WEB_FETCH_MAX_CONTENT_TOKENS } from "../../core/model-params";
import { catalogEntry } from "../../core/models/lookup";
import { resetOfflineCache } from "../../core/offline-model";
import { messageChars } from "../../core/render";
import { defaultSettings } from "../../core/settings";
import { countBlockTokens } from "../../core/tokens";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { replayChars } from "../../durable-objects/conversation/replay-cache";
import { ask, makeClient } from "./offline-model-client";
import { persistInto } from "./turn-harness";
import { messageStart, sse } from "./sse-script";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const URL_PDF = "https://arxiv.org/pdf/2401.00001";

const start = messageStart;
/** A PDF of `bytes` bytes as base64 (an ordinary research paper at 1 MB: ~1.33M chars). */
const pdfBase64 = (bytes: number) =>
  `JVBERi0xLjQK${Buffer.from(Array.from({ length: bytes - 9 }, (_, i) => (i * 7919) % 251)).toString("base64")}`;
const PDF = pdfBase64(1_000_002);
const pdfDocument = (data: string) => ({
  type: "document",
  source: { type: "base64", media_type: "application/pdf", data },
  title: null,
  citations: null,
});
const fetchResult = (doc: unknown) => ({
  type: "web_fetch_tool_result",
  tool_use_id: "srvtoolu_01",
  content: { type: "web_fetch_result", url: URL_PDF, retrieved_at: "2026-12-01T00:00:00Z", content: doc },
});

const fetchReply = (): Response =>
  sse([
    start(2_000),
    [
      "content_block_start",
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "server_tool_use", id: "srvtoolu_01", name: "web_fetch", input: {} },
      },
    ],
    [
      "content_block_delta",
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify({ url: URL_PDF }) },
      },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["content_block_start", { type: "content_block_start", index: 1, content_block: fetchResult(pdfDocument(PDF)) }],
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    // The API counted the fetched PDF as input (max_content_tokens 20,000 caps it): ~22k in all.
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "pause_turn", stop_sequence: null },
        usage: {
          input_tokens: 22_000,
          output_tokens: 60,
          server_tool_use: { web_search_requests: 0, web_fetch_requests: 1 },
        },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
const answer = (): Response =>
  sse([
    start(22_100),
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    [
      "content_block_delta",
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "The paper proposes X." } },
    ],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 9 },
      },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);

describe("a web_fetch of a PDF, as the real API returns it", () => {
  it("is a prompt of ~22k tokens in a 1M window: no in-turn compaction starts", async () => {
    const bodies = [fetchReply(), answer()];
    const seen = { streamed: 0, stateCalls: 0 };
    const client = new Anthropic({
      apiKey: "t",
      maxRetries: 0,
      fetch: async (_url, init) => {
        const body = JSON.parse(String(init?.body));
        if (body.stream) return bodies[seen.streamed++] ?? new Response("{}", { status: 500 });
        seen.stateCalls++;
        return new Response(
          JSON.stringify({
            id: "msg_s",
            type: "message",
            role: "assistant",
            model: SONNET.id,
            content: [{ type: "text", text: "TASK:\n- read the paper" }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: { input_tokens: 500, output_tokens: 20 },
          }),
          { headers: { "content-type": "application/json", "request-id": "req_s" } },
        );
      },
    });
    const settings = defaultSettings(SONNET);
    const saved: StoredMessage[] = [];
    const events: { type: string }[] = [];
    const build = (): ModelRequest => ({
      model: SONNET.id,
      max_tokens: 4_000,
      system: [{ type: "text", text: "sys" }],
      tools: [
        {
          type: "web_fetch_20250910",
          name: "web_fetch",
          max_uses: 5,
          max_content_tokens: WEB_FETCH_MAX_CONTENT_TOKENS,
        },
      ],
      messages: saved.map((m) => ({ role: m.role, content: m.content })),
    });
    const outcome = await runAgentTurn(
      {
        turnId: "turn_1",
        client,
        registry: new ToolRegistry(),
        toolContext: {} as ToolContext,
        maxIterations: 5,
        contextWindowTokens: SONNET.contextWindow,
        model: SONNET,
        knownThinking: () => new Map(),
        buildRequest: build,
        persist: persistInto(saved),
        compactor: new TurnCompactor(settings, client, SONNET, () => () => undefined),
        emit: (e) => events.push(e),
        retryDelayMs: () => 0,
      },
      [{ type: "text", text: `summarize ${URL_PDF}` }],
    );
    expect(outcome.stopReason).toBe("end_turn");
    expect(seen.streamed).toBe(2);
    expect(events.filter((e) => e.type === "compaction_started")).toEqual([]);
    expect(seen.stateCalls).toBe(0);
  });
});

describe("the fold trigger with a PDF fetch in the history", () => {
  const msg = (seq: number, role: "user" | "assistant", content: unknown[]): StoredMessage =>
    ({ id: `m${seq}`, seq, role, createdAt: "", content }) as unknown as StoredMessage;
  const history = (doc: unknown) => {
    const out: StoredMessage[] = [msg(1, "user", [{ type: "text", text: `summarize ${URL_PDF}` }])];
    out.push(
      msg(2, "assistant", [
        { type: "server_tool_use", id: "srvtoolu_01", name: "web_fetch", input: { url: URL_PDF } },
        fetchResult(doc),
        { type: "text", text: "The paper proposes X." },
      ]),
    );
    for (let i = 0; i < 5; i++) {
      out.push(msg(out.length + 1, "user", [{ type: "text", text: `question ${i}` }]));
      out.push(msg(out.length + 1, "assistant", [{ type: "text", text: `answer ${i}` }]));
    }
    return out;
  };
  const settings = defaultSettings(SONNET);
  // What the API counted for the PDF, as text of the same token count at the model's chars per token.
  const sameAsText = {
    type: "document",
    source: {
      type: "text",
      media_type: "text/plain",
      data: "x".repeat(Math.ceil(WEB_FETCH_MAX_CONTENT_TOKENS * settings.charsPerToken)),
    },
    title: null,
    citations: null,
  };
  // The foldable part: everything before the tail, weighed as the fold coordinator weighs it.
  const foldable = (h: StoredMessage[]) =>
    h.slice(0, h.length - settings.tailMessages).reduce((n, m) => n + replayChars(m), 0);

  it("weighs a 1 MB PDF fetch about as a 20k-token text document: under the fold threshold", () => {
    const pdfChars = foldable(history(pdfDocument(PDF)));
    const textChars = foldable(history(sameAsText));
    expect(textChars).toBeLessThan(settings.foldThresholdChars);
    expect(pdfChars).toBeLessThan(settings.foldThresholdChars);
    // Within a third of the text one: a bounded allowance, never the base64's 1.33M chars.
    expect(Math.abs(pdfChars - textChars)).toBeLessThan(textChars / 3);
  });

  it("weighs a small PDF by its bytes (4 bytes a token), below the cap", () => {
    const small = pdfBase64(4_000);
    const chars = messageChars({ content: [fetchResult(pdfDocument(small)) as ContentBlock] });
    const big = messageChars({ content: [fetchResult(pdfDocument(PDF)) as ContentBlock] });
    // 4,000 bytes ≈ 1,000 tokens: far under the cap's weight, and under the base64's own length.
    expect(chars).toBeLessThan(small.length);
    expect(chars).toBeGreaterThan(1_000);
    expect(big).toBeGreaterThan(chars * 10);
    expect(big).toBeLessThan(WEB_FETCH_MAX_CONTENT_TOKENS * 2);
  });
});

describe("countBlockTokens of a PDF fetch", () => {
  it("counts at most max_content_tokens for the document, and its bytes / 4 below that", () => {
    const big = countBlockTokens(fetchResult(pdfDocument(PDF)) as never);
    expect(big).toBeGreaterThanOrEqual(WEB_FETCH_MAX_CONTENT_TOKENS);
    expect(big).toBeLessThan(WEB_FETCH_MAX_CONTENT_TOKENS + 200);
    const small = countBlockTokens(fetchResult(pdfDocument(pdfBase64(4_000))) as never);
    expect(small).toBeGreaterThanOrEqual(1_000);
    expect(small).toBeLessThan(1_200);
  });
});

describe("the offline model's web_fetch of a PDF", () => {
  beforeEach(() => resetOfflineCache());
  const client = makeClient();
  const FETCH: Anthropic.WebFetchTool20250910 = { type: "web_fetch_20250910", name: "web_fetch" };
  const paper = "https://research.example.edu/papers/tides.pdf";

  it("returns a deterministic base64 application/pdf document, and takes it back in the history", async () => {
    const params = ask(`Read the paper.\n@web-fetch ${paper}`, { tools: [FETCH] });
    const reply = await client.messages.create(params);
    const result = reply.content.find((b) => b.type === "web_fetch_tool_result") as Anthropic.WebFetchToolResultBlock;
    expect(result.content).toMatchObject({
      type: "web_fetch_result",
      url: paper,
      content: { type: "document", source: { type: "base64", media_type: "application/pdf" } },
    });
    const data = ((result.content as Anthropic.WebFetchBlock).content.source as Anthropic.Base64PDFSource).data;
    const bytes = Buffer.from(data, "base64");
    expect(bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(bytes.subarray(-6).toString("latin1")).toContain("%%EOF");
    expect(bytes.length).toBeGreaterThan(1_000);
    expect(bytes.length).toBeLessThan(16_000);
    const again = await client.messages.create(ask(`Read the paper.\n@web-fetch ${paper}`, { tools: [FETCH] }));
    const againResult = again.content.find((b) => b.type === "web_fetch_tool_result");
    expect(JSON.stringify(againResult)).toBe(JSON.stringify(result));
    // An HTML page is still a text document.
    const page = await client.messages.create(
      ask("Read the page.\n@web-fetch https://example.com/tides", { tools: [FETCH] }),
    );
    expect(page.content.find((b) => b.type === "web_fetch_tool_result")?.content).toMatchObject({
      content: { source: { type: "text", media_type: "text/plain" } },
    });
    // Sent back as it came, the turn is valid.
    const history: Anthropic.MessageParam[] = [
      { role: "user", content: `Read the paper.\n@web-fetch ${paper}` },
      { role: "assistant", content: reply.content as unknown as Anthropic.ContentBlockParam[] },
      { role: "user", content: "Thanks." },
    ];
    const next = await client.messages.create(ask("", { tools: [FETCH], messages: history }));
    expect(next.type).toBe("message");
  });
});
