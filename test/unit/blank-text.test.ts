// Blank text at every entrance: the Messages API refuses a text block that is empty or only
// whitespace, and a stored one fails every later request of the conversation. Turns, client tool
// results and imported transcripts refuse it, naming the field; a tool's blank output is stored as
// readable words instead.
import { describe, expect, it } from "vitest";
import { runToolStep } from "../../agent/tool-step";
import { ToolRegistry, type ToolContext } from "../../agent/tools/registry";
import type { TurnDeps } from "../../agent/turn-loop";
import { isBlankText, readableToolContent } from "../../core/blank-text";
import { toolResultsBodySchema } from "../../core/client-tools";
import { EMPTY_RESULT } from "../../core/replay-rules";
import { parseImportedMessage } from "../../core/transcript/transcript-check";
import { turnBodySchema } from "../../core/turn-input";
import type { ContentBlock, ModelRequest } from "../../core/types";
import { describeZodError } from "../../core/validation";
import { z } from "zod";

const refusal = (schema: z.ZodType, value: unknown): string => {
  const r = schema.safeParse(value);
  return r.success ? "accepted" : describeZodError(r.error);
};

const BLANKS = ["", " ", "\n\t  \r\n", "\u00a0\u3000", "\u0085", "\u001c\u001f", "\ufeff"];

describe("isBlankText", () => {
  it("counts every whitespace the API may count, and nothing else", () => {
    for (const s of BLANKS) expect(isBlankText(s), JSON.stringify(s)).toBe(true);
    for (const s of ["x", " . ", "\u200b", "0"]) expect(isBlankText(s), JSON.stringify(s)).toBe(false);
  });
});

describe("a turn's content", () => {
  it("refuses blank text as a string or a text block, naming the field", () => {
    for (const s of BLANKS) {
      expect(refusal(turnBodySchema, { content: s })).toBe("content: must contain non-whitespace text");
      expect(
        refusal(turnBodySchema, {
          content: [
            { type: "text", text: "ok" },
            { type: "text", text: s },
          ],
        }),
      ).toBe("content.1.text: must contain non-whitespace text");
    }
    expect(refusal(turnBodySchema, { content: "  hello  " })).toBe("accepted");
  });
});

describe("client tool results", () => {
  const post = (content: unknown) =>
    refusal(toolResultsBodySchema, {
      results: [
        { tool_use_id: "toolu_1", content: "fine" },
        { tool_use_id: "toolu_2", content },
      ],
    });

  it("refuses a blank result, a blank text block and an empty array, naming the result", () => {
    expect(post("   ")).toBe("results.1.content: must contain non-whitespace text");
    expect(post("")).toBe("results.1.content: must contain non-whitespace text");
    expect(post([{ type: "text", text: "\n" }])).toBe("results.1.content.0.text: must contain non-whitespace text");
    expect(post([])).toBe("results.1.content: must hold at least one block");
    expect(post([{ type: "text", text: "42" }])).toBe("accepted");
  });
});

describe("imported transcripts", () => {
  const parse = (m: unknown) => () => parseImportedMessage(JSON.stringify(m), "messages[2]");

  it("refuses blank user text and blank tool results, naming the message and the block", () => {
    expect(parse({ role: "user", content: " \n" })).toThrow("messages[2].content: must contain non-whitespace text");
    expect(
      parse({
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "text", text: "  " },
        ],
      }),
    ).toThrow("messages[2].content.1.text: must contain non-whitespace text");
    expect(parse({ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "\t" }] })).toThrow(
      "messages[2].content.0.content: must contain non-whitespace text",
    );
    expect(
      parse({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: " " }] }],
      }),
    ).toThrow("messages[2].content.0.content.0.text: must contain non-whitespace text");
    // An empty list, as no content at all, is the API's empty result: imported as the replay sends it.
    expect(
      parseImportedMessage(
        JSON.stringify({ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [] }] }),
        "messages[2]",
      )!.content,
    ).toEqual([{ type: "tool_result", tool_use_id: "t", content: EMPTY_RESULT }]);
  });

  it("leaves out an assistant's blank text blocks (as a saved reply does), refusing a message left empty", () => {
    const m = parseImportedMessage(
      JSON.stringify({
        role: "assistant",
        content: [
          { type: "text", text: "" },
          { type: "tool_use", id: "t", name: "x", input: {} },
        ],
      }),
      "messages[1]",
    );
    expect(m!.content).toEqual([{ type: "tool_use", id: "t", name: "x", input: {} }]);
    expect(parse({ role: "assistant", content: [{ type: "text", text: "  " }] })).toThrow(
      "messages[2].content: must contain non-whitespace text",
    );
  });
});

describe("a tool's blank output", () => {
  it("becomes readable words, keeping what else the result holds", () => {
    const image = {
      type: "image" as const,
      source: { type: "base64" as const, media_type: "image/png", data: "AAAA" },
    };
    expect(readableToolContent("")).toBe(EMPTY_RESULT);
    expect(readableToolContent(" \n")).toBe(EMPTY_RESULT);
    expect(readableToolContent([{ type: "text", text: " " }])).toBe(EMPTY_RESULT);
    expect(readableToolContent([{ type: "text", text: " " }, image])).toEqual([image]);
    const fine = [{ type: "text" as const, text: "x" }, image];
    expect(readableToolContent(fine)).toBe(fine);
    expect(readableToolContent("ok")).toBe("ok");
  });

  it("is stored as readable words by the turn's tool step", async () => {
    const registry = new ToolRegistry().register({
      name: "quiet",
      description: "says nothing",
      capability: "quiet",
      core: true,
      input: z.object({}),
      run: async () => ({ content: "  \n" }),
    });
    const deps = {
      turnId: "turn_1",
      emit: () => undefined,
      registry,
      toolContext: { activeTools: [] } as unknown as ToolContext,
    } as unknown as TurnDeps;
    const call: ContentBlock = { type: "tool_use", id: "toolu_1", name: "quiet", input: {} };
    const { results } = await runToolStep(deps, {
      content: [call],
      request: {} as ModelRequest,
      onDelegated: () => undefined,
    });
    expect(results).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: EMPTY_RESULT }]);
  });
});
