// Request rules the api-rules fixtures cover for one model or one header, checked across the others:
// forced tool use with adaptive thinking per model, the beta-gated body fields (each header version,
// count_tokens too), citations all-or-nothing beside server tool documents, and a PDF's bytes.
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { fieldsOnFixtureDay, TOOLS } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const post = fieldsOnFixtureDay;

const THINKING_REFUSAL = "Thinking may not be enabled when tool_choice forces tool use.";

describe("forced tool use with adaptive thinking", () => {
  const forced = (model: string, type: "any" | "tool") => ({
    model,
    thinking: { type: "adaptive" },
    tools: TOOLS,
    tool_choice: type === "any" ? { type } : { type, name: "read_file" },
  });

  it("is refused on Claude 4.7 and earlier (Sonnet 4.6, Opus 4.6, Opus 4.7), any and tool alike", async () => {
    for (const model of ["claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7"])
      for (const type of ["any", "tool"] as const) {
        const answer = await post(forced(model, type));
        expect(answer.status, `${model} ${type}`).toBe(400);
        expect(answer.message, `${model} ${type}`).toBe(THINKING_REFUSAL);
      }
  });

  it("is refused on count_tokens too, as manual thinking is", async () => {
    const answer = await post(forced("claude-opus-4-7", "any"), { path: "/v1/messages/count_tokens" });
    expect(answer.status).toBe(400);
    expect(answer.message).toBe(THINKING_REFUSAL);
  });

  it("is taken on Opus 4.8 and the Claude 5 models that force tools", async () => {
    for (const model of ["claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5-5"])
      expect((await post(forced(model, "any"))).status, model).toBe(200);
  });

  it("is taken on the refusing models when thinking is off", async () => {
    for (const model of ["claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-7"])
      expect((await post({ ...forced(model, "any"), thinking: { type: "disabled" } })).status, model).toBe(200);
  });
});

describe("beta-gated body fields", () => {
  const mcp = { mcp_servers: [{ type: "url", url: "https://mcp.example.com/sse", name: "example" }] };
  const editing = { context_management: { edits: [{ type: "clear_tool_uses_20250919" }] } };
  // From mcp-client-2025-11-20 on, each server is referenced by exactly one mcp_toolset in tools.
  const toolset = { ...mcp, tools: [{ type: "mcp_toolset", mcp_server_name: "example" }] };

  it("takes mcp_servers with any MCP connector beta version, among other betas", async () => {
    for (const beta of [
      "mcp-client-2025-04-04",
      "mcp-client-2025-11-20",
      "fast-mode-2026-02-01, mcp-client-2026-09-15",
    ])
      expect((await post(beta === "mcp-client-2025-04-04" ? mcp : toolset, { beta })).status, beta).toBe(200);
  });

  it("refuses each field under the other feature's header", async () => {
    expect((await post(mcp, { beta: "context-management-2025-06-27" })).message).toBe(
      "mcp_servers: Extra inputs are not permitted",
    );
    expect((await post(editing, { beta: "mcp-client-2025-04-04" })).message).toBe(
      "context_management: Extra inputs are not permitted",
    );
  });

  it("takes them on count_tokens with the header, not without", async () => {
    const path = "/v1/messages/count_tokens";
    expect((await post(mcp, { path, beta: "mcp-client-2025-04-04" })).status).toBe(200);
    expect((await post(editing, { path, beta: "context-management-2025-06-27" })).status).toBe(200);
    expect((await post(editing, { path })).message).toBe("context_management: Extra inputs are not permitted");
  });

  it("still refuses a body key named like an Object.prototype member", async () => {
    const answer = await post({ constructor: 1 }, { beta: "mcp-client-2025-04-04" });
    expect(answer.status).toBe(400);
    expect(answer.message).toBe("constructor: Extra inputs are not permitted");
  });
});

describe("citations all-or-nothing", () => {
  const doc = (citations?: unknown) => ({
    type: "document",
    source: { type: "text", media_type: "text/plain", data: "The harbor opens at six." },
    ...(citations === undefined ? {} : { citations }),
  });
  const ask = { type: "text", text: "When?" };

  it("treats a null config and {} as disabled", async () => {
    expect((await post({ messages: [{ role: "user", content: [doc(null), doc({}), doc(), ask] }] })).status).toBe(200);
    const mixed = await post({ messages: [{ role: "user", content: [doc({}), doc({ enabled: true }), ask] }] });
    expect(mixed.status).toBe(400);
    expect(mixed.message).toContain(
      "messages.0.content.1.document.citations: citations must be enabled on all or none",
    );
  });

  it("keeps documents and search results apart: cited documents beside uncited search results are taken", async () => {
    const result = {
      type: "search_result",
      source: "https://example.com/market",
      title: "Market",
      content: [{ type: "text", text: "The market opens at nine." }],
    };
    expect((await post({ messages: [{ role: "user", content: [doc({ enabled: true }), result, ask] }] })).status).toBe(
      200,
    );
  });
});

describe("a base64 PDF's data", () => {
  const pdf = (data: string) => ({
    messages: [
      {
        role: "user",
        content: [
          { type: "document", source: { type: "base64", media_type: "application/pdf", data } },
          { type: "text", text: "What is this?" },
        ],
      },
    ],
  });

  it("refuses data that is not base64, and checks a PDF inside a tool_result too", async () => {
    expect((await post(pdf("%%%%not base64"))).message).toContain("The PDF specified was not valid");
    const nested = await post({
      tools: TOOLS,
      messages: [
        { role: "user", content: "Read it." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "read_file", input: {} }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_01",
              content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "AAAA" } }],
            },
          ],
        },
      ],
    });
    expect(nested.status).toBe(400);
    expect(nested.message).toBe(
      "messages.2.content.0.tool_result.content.0.document.source.base64.data: The PDF specified was not valid.",
    );
  });

  it("takes a real PDF header however short the rest", async () => {
    expect((await post(pdf(btoa("%PDF-1.7\n")))).status).toBe(200);
  });
});
