// A tool call cut at max_tokens, as the API cuts one: the reply spends the whole budget
// (output_tokens equal to max_tokens, stop_reason max_tokens), the cut tool_use is there, its
// input_json_delta fragments stop mid-JSON, and the non-streamed answer carries the input the
// SDK's MessageStream reads from those fragments. Before, the offline model dropped the whole call
// and stopped far below max_tokens, so nothing downstream ever met a cut call.
import type Anthropic from "@anthropic-ai/sdk";
import { partialParse } from "@anthropic-ai/sdk/_vendor/partial-json-parser/parser";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { partialJsonInput } from "../../core/offline-model/cut-call";
import { ask, makeClient, type Params, rawPost, TOOLS, toolUses } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

// About 400 words of body, as a file written by a tool call.
const body = Array.from({ length: 400 }, (_, i) => `word${i % 37}`).join(" ");
const fileInput = { path: "notes/draft.md", content: body };
const listInput = {
  path: "notes/list.md",
  items: Array.from({ length: 150 }, (_, i) => ({ n: i, done: i % 3 === 0, note: i % 5 ? `item ${i}` : null })),
};
const writeFile = (input: object) => `@tool write_file ${JSON.stringify(input)}`;
const request = (prompt: string, max_tokens: number): Params =>
  ask(prompt, { model: "claude-haiku-4-5", max_tokens, tools: TOOLS });

/** The SSE answer's events, read raw. */
async function streamedEvents(params: Params): Promise<{ type: string; [key: string]: unknown }[]> {
  const response = await rawPost({ ...params, stream: true });
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)));
}

/** What a reply says, less its ids (they follow the request's bytes, which `stream` changes). */
const said = (message: Anthropic.Message) => ({
  content: message.content.map((block) => (block.type === "tool_use" ? { ...block, id: "" } : block)),
  stop_reason: message.stop_reason,
  stop_sequence: message.stop_sequence,
  usage: message.usage,
});

describe("a tool call cut at max_tokens", () => {
  it("spends the whole budget and keeps the cut call, at every budget that reaches it", async () => {
    const client = makeClient();
    const whole = await client.messages.create(request(writeFile(fileInput), 4_000));
    expect(whole.stop_reason).toBe("tool_use");
    const full = whole.usage.output_tokens;
    for (const max of [12, 50, 200, 400, 600]) {
      expect(max).toBeLessThan(full);
      const cut = await client.messages.create(request(writeFile(fileInput), max));
      expect(cut.stop_reason, `max_tokens ${max}`).toBe("max_tokens");
      expect(cut.usage.output_tokens, `max_tokens ${max}`).toBe(max);
      const calls = toolUses(cut);
      expect(calls, `max_tokens ${max}`).toHaveLength(1);
      expect(calls[0].name).toBe("write_file");
      // The body's string was left open by the cut: a partial parse drops it, the path stays.
      expect(calls[0].input, `max_tokens ${max}`).toEqual(max >= 50 ? { path: "notes/draft.md" } : {});
    }
  });

  it("streams the cut call as input {} then input_json_delta fragments that stop mid-JSON", async () => {
    for (const max of [50, 200, 400]) {
      const events = await streamedEvents(request(writeFile(fileInput), max));
      const start = events.findIndex(
        (e) => e.type === "content_block_start" && (e.content_block as { type: string }).type === "tool_use",
      );
      expect(start, `max_tokens ${max}`).toBeGreaterThan(0);
      const index = events[start].index;
      expect((events[start].content_block as { input: unknown }).input).toEqual({});
      const fragments = events
        .filter((e) => e.type === "content_block_delta" && e.index === index)
        .map((e) => (e.delta as { type: string; partial_json: string }).partial_json);
      expect(fragments.length).toBeGreaterThan(1);
      const json = fragments.join("");
      expect(JSON.stringify(fileInput).startsWith(json)).toBe(true);
      expect(json.length).toBeLessThan(JSON.stringify(fileInput).length);
      expect(() => JSON.parse(json)).toThrow();
      expect(events.some((e) => e.type === "content_block_stop" && e.index === index)).toBe(true);
      const end = events.find((e) => e.type === "message_delta") as unknown as {
        delta: { stop_reason: string };
        usage: { output_tokens: number };
      };
      expect([end.delta.stop_reason, end.usage.output_tokens]).toEqual(["max_tokens", max]);
    }
  });

  it("answers create() with the input the SDK's MessageStream reads from the stream, the whole message alike", async () => {
    const client = makeClient();
    for (const input of [fileInput, listInput])
      for (const max of [30, 80, 200, 333, 500]) {
        const params = request(writeFile(input), max);
        const created = await client.messages.create(params);
        const streamed = await client.messages.stream(params).finalMessage();
        expect(toolUses(created), `max_tokens ${max}`).toHaveLength(1);
        expect(toolUses(created)[0].input).toEqual(toolUses(streamed)[0].input);
        expect(said(created)).toEqual(said(streamed));
      }
    // A cut inside the list keeps its finished items and the finished fields of the one it cut,
    // as the SDK's reading does.
    const inList = await client.messages.create(request(writeFile(listInput), 200));
    const items = (toolUses(inList)[0].input as { items?: object[] }).items ?? [];
    expect(items.length).toBeGreaterThan(1);
    expect(items.slice(0, -1)).toEqual(listInput.items.slice(0, items.length - 1));
    expect(listInput.items[items.length - 1]).toMatchObject(items.at(-1)!);
  });

  it("keeps a call that fits whole and cuts the next one; nothing after the cut", async () => {
    const prompt = `@tool read_file {"path":"a.ts"}\n${writeFile(fileInput)}\n@tool read_file {"path":"b.ts"}`;
    const cut = await makeClient().messages.create(request(prompt, 120));
    expect(cut.stop_reason).toBe("max_tokens");
    expect(cut.usage.output_tokens).toBe(120);
    const calls = toolUses(cut);
    expect(calls.map((c) => c.name)).toEqual(["read_file", "write_file"]);
    expect(calls[0].input).toEqual({ path: "a.ts" });
    expect(calls[1].input).toEqual({ path: "notes/draft.md" });
  });

  it("leaves thinking and text cut as before: text within the budget, thinking spending it", async () => {
    const client = makeClient();
    const text = await client.messages.create(request("@reply-chars 3000", 50));
    expect(text.stop_reason).toBe("max_tokens");
    expect(text.usage.output_tokens).toBeLessThanOrEqual(50);
    expect(toolUses(text)).toEqual([]);
    const thinking = await client.messages.create(
      ask(writeFile(fileInput), { model: "offline-200k", max_tokens: 20, tools: TOOLS }),
    );
    expect(thinking.stop_reason).toBe("max_tokens");
    expect(thinking.content.map((b) => b.type)).toEqual(["thinking"]);
    expect(thinking.usage.output_tokens).toBe(20);
  });
});

describe("the partial reading of a cut JSON text", () => {
  it("is the SDK parser's at every cut of a call's input", () => {
    // Every cut of a short body and of a list's first items: each kind of place a cut can fall.
    for (const input of [
      { ...fileInput, content: body.slice(0, 60) },
      { ...listInput, items: listInput.items.slice(0, 6) },
      { a: { b: [1, -2.5e-3, 'x\\"y\u00e9', true, false, null, {}], c: "" }, 'd"e': [[], [[]]], f: 1234567 },
    ]) {
      const json = JSON.stringify(input);
      for (let end = 0; end <= json.length; end++)
        expect(partialJsonInput(json.slice(0, end)), json.slice(0, end)).toEqual(
          end === 0 ? {} : partialParse(json.slice(0, end)),
        );
    }
  });
});

describe("count_tokens", () => {
  it("names its request in a request-id header, as every other answer does", async () => {
    const params = ask("How many tokens is this?");
    const counted = await rawPost({ model: params.model, messages: params.messages }, "/v1/messages/count_tokens");
    expect(counted.status).toBe(200);
    expect(counted.headers.get("request-id")).toMatch(/^req_[0-9A-Za-z]+$/);
    // Deterministic, and not the id of another request.
    const again = await rawPost({ model: params.model, messages: params.messages }, "/v1/messages/count_tokens");
    expect(again.headers.get("request-id")).toBe(counted.headers.get("request-id"));
    const answered = await rawPost(params);
    expect(answered.headers.get("request-id")).not.toBe(counted.headers.get("request-id"));
    const { _request_id } = await makeClient()
      .messages.countTokens({ model: params.model, messages: params.messages })
      .withResponse()
      .then(({ data }) => data as Anthropic.MessageTokensCount & { _request_id?: string | null });
    expect(_request_id).toBe(counted.headers.get("request-id"));
  });
});
