// tool_choice as the offline model follows it: disable_parallel_tool_use keeps one call (SDK
// ToolChoiceAuto: "at most one tool use"; ToolChoiceAny/ToolChoiceTool: "exactly one tool use"), a
// forced choice is followed on a prompt and after tool results alike (ToolChoiceTool: "The model will
// use the specified tool with `tool_choice.name`"; ToolChoiceAny: "must use one of the provided
// tools"), and tool_result's field types are checked as the schema does.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { ask, HELLO, makeClient, postOnFixtureDay, TOOLS, textOf, toolUses } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const FORCING = "claude-haiku-5-5";
const TWO_TOOLS: Anthropic.Tool[] = [
  ...TOOLS,
  { name: "write_file", description: "Write a file", input_schema: { type: "object" } },
];
const THREE_CALLS = ['@tool read_file {"path":"a.ts"}', '@tool read_file {"path":"b.ts"}', "@tool write_file {}"].join(
  "\n",
);
const STEPPED = [
  "@tools-per-step 2",
  '@tool read_file {"path":"a.ts"}',
  '@tool read_file {"path":"b.ts"}',
  '@tool read_file {"path":"c.ts"}',
  '@tool read_file {"path":"d.ts"}',
].join("\n");

/** The request after `first`'s reply: its tool calls answered with "ok". */
function answered(first: Anthropic.MessageCreateParamsNonStreaming, reply: Anthropic.Message) {
  const results = toolUses(reply).map((use) => ({ type: "tool_result" as const, tool_use_id: use.id, content: "ok" }));
  return [
    ...first.messages,
    { role: "assistant" as const, content: reply.content as Anthropic.ContentBlockParam[] },
    { role: "user" as const, content: results },
  ];
}

describe("tool_choice.disable_parallel_tool_use", () => {
  it("keeps only the first of several @tool calls, for auto, any and tool", async () => {
    const client = makeClient();
    const choices: Anthropic.ToolChoice[] = [
      { type: "auto", disable_parallel_tool_use: true },
      { type: "any", disable_parallel_tool_use: true },
      { type: "tool", name: "read_file", disable_parallel_tool_use: true },
    ];
    for (const tool_choice of choices) {
      const reply = await client.messages.create(ask(THREE_CALLS, { model: FORCING, tools: TWO_TOOLS, tool_choice }));
      expect(
        toolUses(reply).map((use) => use.input),
        tool_choice.type,
      ).toEqual([{ path: "a.ts" }]);
      expect(reply.stop_reason, tool_choice.type).toBe("tool_use");
    }
    const parallel = await client.messages.create(
      ask(THREE_CALLS, { model: FORCING, tools: TWO_TOOLS, tool_choice: { type: "auto" } }),
    );
    expect(toolUses(parallel)).toHaveLength(3);
  });

  it("keeps only the first of the next batch after tool results", async () => {
    const client = makeClient();
    const first = ask(STEPPED, { model: FORCING, tools: TOOLS });
    const reply = await client.messages.create(first);
    expect(toolUses(reply)).toHaveLength(2);
    const messages = answered(first, reply);
    const parallel = await client.messages.create({ ...first, messages });
    expect(toolUses(parallel).map((use) => use.input)).toEqual([{ path: "c.ts" }, { path: "d.ts" }]);
    const single = await client.messages.create({
      ...first,
      messages,
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
    });
    expect(toolUses(single).map((use) => use.input)).toEqual([{ path: "c.ts" }]);
  });
});

describe("a forced tool_choice", () => {
  it("tool: calls only the named tool, even when @tool lines name others", async () => {
    const client = makeClient();
    const reply = await client.messages.create(
      ask("@tool read_file {}", {
        model: FORCING,
        tools: TWO_TOOLS,
        tool_choice: { type: "tool", name: "write_file" },
      }),
    );
    expect(toolUses(reply).map((use) => [use.name, use.input])).toEqual([["write_file", {}]]);
    expect(reply.content[0].type).toBe("tool_use");
    const mixed = await client.messages.create(
      ask(THREE_CALLS, { model: FORCING, tools: TWO_TOOLS, tool_choice: { type: "tool", name: "write_file" } }),
    );
    expect(toolUses(mixed).map((use) => use.name)).toEqual(["write_file"]);
  });

  it("any and tool: after tool results the reply is still a tool call, with no text before it", async () => {
    const client = makeClient();
    const first = ask("@tool read_file {}", { model: FORCING, tools: TWO_TOOLS });
    const reply = await client.messages.create(first);
    const messages = answered(first, reply);
    const auto = await client.messages.create({ ...first, messages });
    expect(auto.stop_reason).toBe("end_turn");
    for (const [tool_choice, name] of [
      [{ type: "any" }, "read_file"],
      [{ type: "tool", name: "write_file" }, "write_file"],
    ] as const) {
      const forced = await client.messages.create({ ...first, messages, tool_choice });
      expect(forced.stop_reason, tool_choice.type).toBe("tool_use");
      expect(
        forced.content.map((block) => block.type),
        tool_choice.type,
      ).toEqual(["tool_use"]);
      expect(toolUses(forced)[0].name, tool_choice.type).toBe(name);
      expect(textOf(forced), tool_choice.type).toBe("");
    }
  });

  it("tool after tool results: keeps only the named tool's calls of the next batch", async () => {
    const client = makeClient();
    const prompt = ["@tools-per-step 1", "@tool read_file {}", "@tool read_file {}", "@tool write_file {}"].join("\n");
    const first = ask(prompt, { model: FORCING, tools: TWO_TOOLS });
    const reply = await client.messages.create(first);
    const forced = await client.messages.create({
      ...first,
      messages: answered(first, reply),
      tool_choice: { type: "tool", name: "write_file" },
    });
    expect(toolUses(forced).map((use) => use.name)).toEqual(["write_file"]);
  });
});

describe("tool_result and text value types", () => {
  const history = (result: Record<string, unknown>) => ({
    ...HELLO,
    tools: TOOLS,
    messages: [
      { role: "user", content: "Read it." },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", ...result }] },
    ],
  });
  const message = async (body: unknown) => {
    const response = await postOnFixtureDay(body);
    const json = (await response.json()) as { error?: { message?: string } };
    return { status: response.status, message: json.error?.message };
  };

  it("refuses a content that is neither a string nor a list", async () => {
    for (const content of [5, {}])
      expect(await message(history({ content }))).toEqual({
        status: 400,
        message: "messages.2.content.0.tool_result.content: Input should be a valid string or a valid list",
      });
    expect((await message(history({ content: "ok" }))).status).toBe(200);
    expect((await message(history({ content: [{ type: "text", text: "ok" }] }))).status).toBe(200);
  });

  it("refuses a tool_use_id that is not a string", async () => {
    const body = history({ content: "ok" });
    const blocks = body.messages[2].content as Record<string, unknown>[];
    blocks[0].tool_use_id = 1;
    expect(await message(body)).toEqual({
      status: 400,
      message: "messages.2.content.0.tool_result.tool_use_id: Input should be a valid string",
    });
  });

  it("refuses a text block whose text is not a string, at the top level and inside a tool_result", async () => {
    expect(await message({ ...HELLO, messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] })).toEqual({
      status: 400,
      message: "messages.0.content.0.text.text: Input should be a valid string",
    });
    expect(await message(history({ content: [{ type: "text", text: 5 }] }))).toEqual({
      status: 400,
      message: "messages.2.content.0.tool_result.content.0.text.text: Input should be a valid string",
    });
  });
});
