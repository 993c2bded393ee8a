// Request rules the offline model enforces per model, per beta header and per field type: fast mode
// (per-model availability, its beta header, its removal date), a search_result's content, a forced
// tool that is not among the tools, budget_tokens with interleaved thinking, and the value types of
// block and tool_choice fields. Header-dependent cases live here (an api-rules fixture sends a header
// only where it says so).
import { beforeEach, describe, expect, it } from "vitest";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";
import { TOOLS } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const DEC_3 = Date.UTC(2026, 11, 3, 12);
const NOV_29 = Date.UTC(2026, 10, 29, 12);
const FAST_BETA = "fast-mode-2026-02-01";
const INTERLEAVED_BETA = "interleaved-thinking-2025-05-14";

interface Answer {
  status: number;
  message?: string;
  stopReason?: string;
  content: { type: string; name?: string }[];
}

async function post(
  body: Record<string, unknown>,
  { beta, now = DEC_3 }: { beta?: string; now?: number } = {},
): Promise<Answer> {
  const headers: Record<string, string> = beta ? { "anthropic-beta": beta } : {};
  const response = await handleMessagesRequest(
    new Request("https://offline-model.invalid/v1/messages", {
      method: "POST",
      headers,
      body: JSON.stringify({ max_tokens: 1024, messages: [{ role: "user", content: "Hello." }], ...body }),
    }),
    { now: () => now },
  );
  const json = (await response.json()) as {
    error?: { message: string };
    stop_reason?: string;
    content?: { type: string; name?: string }[];
  };
  return {
    status: response.status,
    message: json.error?.message,
    stopReason: json.stop_reason,
    content: json.content ?? [],
  };
}

const userBlocks = (...content: unknown[]) => ({ messages: [{ role: "user", content }] });

describe("fast mode (speed: fast) per model", () => {
  it("is taken on a model that offers it, without a beta header", async () => {
    for (const model of ["claude-opus-5-5", "claude-fable-5-2", "claude-mythos-5-2"])
      expect((await post({ model, speed: "fast" })).status, model).toBe(200);
  });

  it("is refused on a model without fast mode, header or not", async () => {
    for (const model of ["claude-sonnet-5-5", "claude-haiku-5-5", "offline-200k"]) {
      const plain = await post({ model, speed: "fast" });
      expect(plain.status, model).toBe(400);
      expect(plain.message).toContain('speed: "fast" is not supported for this model');
      expect((await post({ model, speed: "fast" }, { beta: FAST_BETA })).status, model).toBe(400);
    }
    // speed "standard" stays valid everywhere.
    expect((await post({ model: "claude-sonnet-5-5", speed: "standard" })).status).toBe(200);
  });

  it("needs the beta header on a research-preview model", async () => {
    const bare = await post({ model: "claude-opus-5", speed: "fast" });
    expect(bare.status).toBe(400);
    expect(bare.message).toContain(FAST_BETA);
    expect((await post({ model: "claude-opus-5", speed: "fast" }, { beta: `other-beta, ${FAST_BETA}` })).status).toBe(
      200,
    );
  });

  it("is refused on Opus 4.8 from its removal date on", async () => {
    const before = await post({ model: "claude-opus-4-8", speed: "fast" }, { beta: FAST_BETA, now: NOV_29 });
    expect(before.status).toBe(200);
    const after = await post({ model: "claude-opus-4-8", speed: "fast" }, { beta: FAST_BETA });
    expect(after.status).toBe(400);
    expect(after.message).toContain("2026-11-30");
    expect((await post({ model: "claude-opus-4-8", speed: "standard" })).status).toBe(200);
  });
});

describe("search_result content", () => {
  const result = (extra: Record<string, unknown>) => ({
    type: "search_result",
    source: "https://example.com/a",
    title: "A",
    content: [{ type: "text", text: "The harbor opens at six." }],
    ...extra,
  });

  it("takes text blocks", async () => {
    expect(
      (await post({ model: "claude-sonnet-5-5", ...userBlocks(result({}), { type: "text", text: "When?" }) })).status,
    ).toBe(200);
  });

  it.each([
    ["a non-text item", { content: [{ type: "image", source: {} }] }, "search_result.content.0: Input tag 'image'"],
    [
      "an unknown field",
      { content: [{ type: "text", text: "x", bold: true }] },
      "search_result.content.0.bold: Extra inputs",
    ],
    ["a text item without text", { content: [{ type: "text" }] }, "search_result.content.0.text: Field required"],
    [
      "a non-string text",
      { content: [{ type: "text", text: 5 }] },
      "search_result.content.0.text: Input should be a valid string",
    ],
    ["a non-list content", { content: "x" }, "search_result.content: Input should be a valid list"],
    ["a non-string source", { source: 5 }, "search_result.source: Input should be a valid string"],
    ["a non-string title", { title: null }, "search_result.title: Input should be a valid string"],
    ["a non-object citations", { citations: true }, "search_result.citations: Input should be a valid dictionary"],
  ])("refuses %s", async (_, extra, message) => {
    const answer = await post({
      model: "claude-sonnet-5-5",
      ...userBlocks(result(extra), { type: "text", text: "When?" }),
    });
    expect(answer.status).toBe(400);
    expect(answer.message).toContain(`messages.0.content.0.${message}`);
  });

  it("refuses an empty text inside one", async () => {
    const answer = await post({
      model: "claude-sonnet-5-5",
      ...userBlocks(result({ content: [{ type: "text", text: "" }] }), { type: "text", text: "When?" }),
    });
    expect(answer.status).toBe(400);
    expect(answer.message).toBe("messages: text content blocks must be non-empty");
  });

  it("checks one nested in a tool_result too", async () => {
    const answer = await post({
      model: "claude-sonnet-5-5",
      tools: TOOLS,
      messages: [
        { role: "user", content: "Read it." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [result({ content: [{ type: "image" }] })] },
          ],
        },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.message).toContain(
      "messages.2.content.0.tool_result.content.0.search_result.content.0: Input tag 'image'",
    );
  });
});

describe("a forced tool must be one of the tools", () => {
  it("refuses tool_choice naming a tool not in tools, and takes one that is", async () => {
    const unknown = await post({
      model: "claude-haiku-5-5",
      tools: TOOLS,
      tool_choice: { type: "tool", name: "nope" },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain('tool_choice.tool.name: "nope"');
    const known = await post({
      model: "claude-haiku-5-5",
      tools: TOOLS,
      tool_choice: { type: "tool", name: "read_file" },
    });
    expect(known.status).toBe(200);
    expect(known.content.map((block) => block.name)).toEqual(["read_file"]);
  });
});

describe("budget_tokens with interleaved thinking", () => {
  const manual = { model: "claude-sonnet-4-6", max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 4096 } };

  it("may exceed max_tokens with the interleaved-thinking beta header, not without it", async () => {
    const bare = await post(manual);
    expect(bare.status).toBe(400);
    expect(bare.message).toContain("`max_tokens` must be greater than `thinking.budget_tokens`");
    expect((await post({ ...manual, tools: TOOLS }, { beta: INTERLEAVED_BETA })).status).toBe(200);
  });
});

describe("field value types", () => {
  const doc = (extra: Record<string, unknown>) => ({
    type: "document",
    source: { type: "text", media_type: "text/plain", data: "The harbor opens at six." },
    ...extra,
  });
  const withDoc = (extra: Record<string, unknown>) => userBlocks(doc(extra), { type: "text", text: "When?" });

  it.each([
    [{ citations: true }, "document.citations: Input should be a valid dictionary"],
    [{ citations: { enabled: "yes" } }, "document.citations.enabled: Input should be a valid boolean"],
    [{ citations: { enabled: true, style: "x" } }, "document.citations.style: Extra inputs are not permitted"],
    [{ title: 5 }, "document.title: Input should be a valid string"],
    [{ context: 5 }, "document.context: Input should be a valid string"],
  ])("refuses document %j", async (extra, message) => {
    const answer = await post({ model: "claude-sonnet-5-5", ...withDoc(extra) });
    expect(answer.status).toBe(400);
    expect(answer.message).toContain(`messages.0.content.0.${message}`);
  });

  it("takes a document's null title, context and citations, and {enabled}", async () => {
    const ok = await post({
      model: "claude-sonnet-5-5",
      ...withDoc({ title: null, context: null, citations: null }),
    });
    expect(ok.status).toBe(200);
    expect(
      (await post({ model: "claude-sonnet-5-5", ...withDoc({ title: "T", citations: { enabled: false } }) })).status,
    ).toBe(200);
  });

  it("refuses a non-boolean tool_result.is_error", async () => {
    const answer = await post({
      model: "claude-sonnet-5-5",
      tools: TOOLS,
      messages: [
        { role: "user", content: "Read it." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok", is_error: "no" }] },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.message).toContain("messages.2.content.0.tool_result.is_error: Input should be a valid boolean");
  });

  it("refuses a non-boolean disable_parallel_tool_use and a non-string forced name", async () => {
    const flag = await post({
      model: "claude-sonnet-5-5",
      tools: TOOLS,
      tool_choice: { type: "auto", disable_parallel_tool_use: "yes" },
    });
    expect(flag.status).toBe(400);
    expect(flag.message).toContain("tool_choice.auto.disable_parallel_tool_use: Input should be a valid boolean");
    const name = await post({ model: "claude-haiku-5-5", tools: TOOLS, tool_choice: { type: "tool", name: 5 } });
    expect(name.status).toBe(400);
    expect(name.message).toContain("tool_choice.tool.name: Input should be a valid string");
    const ok = await post({
      model: "claude-sonnet-5-5",
      tools: TOOLS,
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
    });
    expect(ok.status).toBe(200);
  });
});
