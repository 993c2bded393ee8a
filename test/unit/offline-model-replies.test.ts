// Offline model replies through the SDK: plain and streamed text, @tool directives and
// @tools-per-step batches, and max_tokens truncation.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { countRequestTokens } from "../../core/tokens";
import { ask, makeClient, type Params, rawPost, textOf, TOOLS, toolUses } from "./offline-model-client";

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
    const counted = await makeClient().messages.countTokens({
      model: params.model,
      system: params.system,
      messages: params.messages,
    });
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
      /^message_start ping (content_block_start (content_block_delta )+content_block_stop ){3}message_delta message_stop$/,
    );
    const data = frames.map((frame) => JSON.parse(frame.slice(frame.indexOf("data: ") + 6)));
    expect(data.some((d) => d.delta?.type === "input_json_delta")).toBe(true);
    expect(data.at(-2).delta.stop_reason).toBe("tool_use");
    expect(await (await rawPost(body)).text()).toBe(raw);
  });

  it("streams tool_use input as JSON deltas that the SDK reassembles", async () => {
    const final = await makeClient()
      .messages.stream(
        ask('@tool read_file {"path":"src/a-very-long-directory-name/and/a/long/file-name.ts","lines":[1,200]}', {
          tools: TOOLS,
        }),
      )
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
    // Like Claude Sonnet 5.5: thinking first, then the note before the calls as a progress-update thinking block.
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "thinking", "tool_use", "tool_use"]);
  });

  it("sends {} with a note for bad JSON, and still calls tools missing from `tools`", async () => {
    const message = await makeClient().messages.create(
      ask("@tool read_file {path: oops}\n@tool not_registered", { tools: TOOLS }),
    );
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
      messages: [
        ...first.messages,
        { role: "assistant", content: calling.content },
        { role: "user", content: results },
      ],
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
    const first: Params = ask(
      'Read all.\n@tools-per-step 2\n@tool read_file {"path":"file-a1"}\n@tool read_file {"path":"file-b2"}\n@tool read_file {"path":"file-c3"}',
      { tools: TOOLS },
    );
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
      const results: Anthropic.ContentBlockParam[] = calls.map((c) => ({
        type: "tool_result",
        tool_use_id: c.id,
        content: "ok",
      }));
      // The second carrier also holds a compaction's continuation nudge: not user text.
      if (step === 0)
        results.push({
          type: "text",
          text: `<turn_state>\nTASK:\n- read all\nREMAINING:\n${remaining}\nDATA:\n- file-a1 and file-b2 read\n</turn_state>`,
        });
      messages.push({ role: "user", content: results });
    }
    return issued;
  }

  it("issues the calls a batch per step, resuming after a compaction nudge from its REMAINING, then reports", async () => {
    expect(await batchTurn("- file-c3")).toEqual([{ path: "file-a1" }, { path: "file-b2" }, { path: "file-c3" }]);
  });

  it("resumes only from what the turn state says: a wrong REMAINING redoes or skips work", async () => {
    expect(await batchTurn("- file-a1, file-c3")).toEqual([
      { path: "file-a1" },
      { path: "file-b2" },
      { path: "file-a1" },
      { path: "file-c3" },
    ]);
    expect(await batchTurn("- nothing left")).toEqual([{ path: "file-a1" }, { path: "file-b2" }]);
  });
});

describe("max_tokens", () => {
  it("truncates a long reply to max_tokens with stop_reason max_tokens", async () => {
    const client = makeClient();
    // No up-front thinking (between_tools), so the whole budget goes to the text.
    const noThinking: Partial<Params> = { thinking: { type: "between_tools" } };
    const full = textOf(await client.messages.create(ask("@reply-chars 3000", noThinking)));
    const cut = await client.messages.create(ask("@reply-chars 3000", { ...noThinking, max_tokens: 50 }));
    expect(cut.stop_reason).toBe("max_tokens");
    expect(cut.usage.output_tokens).toBeLessThanOrEqual(50);
    expect(cut.usage.output_tokens).toBeGreaterThanOrEqual(45);
    expect(full.startsWith(textOf(cut))).toBe(true);
    expect(textOf(cut).length).toBeLessThan(full.length);
  });

  it("@max-tokens-stop forces max_tokens and carries no tool calls", async () => {
    const message = await makeClient().messages.create(
      ask('@max-tokens-stop\n@tool read_file {"path":"a.ts"}', { tools: TOOLS }),
    );
    expect(message.stop_reason).toBe("max_tokens");
    expect(toolUses(message)).toEqual([]);
  });
});

describe("stop sequences", () => {
  it("stop the reply where it first generates one: the sequence named, nothing of it or after it sent, streamed alike", async () => {
    const client = makeClient();
    const plain = await client.messages.create(ask("Hello."));
    const full = textOf(plain);
    const cut = full.indexOf('"Hello."');
    expect(cut).toBeGreaterThan(0);
    const stopped = await client.messages.create(ask("Hello.", { stop_sequences: ["never here", '"Hello."'] }));
    expect(stopped.stop_reason).toBe("stop_sequence");
    expect(stopped.stop_sequence).toBe('"Hello."');
    expect(textOf(stopped)).toBe(full.slice(0, cut));
    expect(stopped.usage.output_tokens).toBeLessThan(plain.usage.output_tokens);
    const streamed = await client.messages.stream(ask("Hello.", { stop_sequences: ['"Hello."'] })).finalMessage();
    expect([streamed.stop_reason, streamed.stop_sequence, textOf(streamed)]).toEqual([
      "stop_sequence",
      '"Hello."',
      full.slice(0, cut),
    ]);
    // None generated: the reply ends as it would.
    const untouched = await client.messages.create(ask("Hello.", { stop_sequences: ["never here"] }));
    expect([untouched.stop_reason, untouched.stop_sequence, textOf(untouched)]).toEqual(["end_turn", null, full]);
  });
});
