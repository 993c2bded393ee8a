// `@model-error` aimed at one phase of a turn: the Nth call, summarization requests, and only the
// first K attempts (the SDK's retry counter), so faults can be injected wherever a turn calls out.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { createOfflineModelFetch, parseDirectives } from "../../core/offline-model";
import { modelErrorFor } from "../../core/offline-model/turn";
import { foldSystemPrompt } from "../../core/fold";

const client = (maxRetries = 0) =>
  new Anthropic({
    apiKey: "offline",
    baseURL: "https://offline-model.invalid",
    fetch: createOfflineModelFetch(),
    maxRetries,
  });
const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });
const toolTurn = (prompt: string) => [
  user(prompt),
  { role: "assistant" as const, content: [{ type: "tool_use", id: "toolu_1", name: "x", input: {} }] },
  { role: "user" as const, content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "done" }] },
];

describe("@model-error phases", () => {
  it("parses call=, summarize and attempts=", () => {
    const d = parseDirectives("@model-error 529 call=2 attempts=1\n@model-error 500 summarize\n@model-error 429");
    expect(d.modelErrors).toEqual([
      { status: 529, call: 2, summarize: false, attempts: 1 },
      { status: 500, call: null, summarize: true, attempts: null },
      { status: 429, call: 1, summarize: false, attempts: null },
    ]);
    expect(d.modelError).toBe(429);
  });

  it("fails only the call it names", () => {
    expect(modelErrorFor([user("hi\n@model-error 529")], false, 0)).toBe(529);
    expect(modelErrorFor(toolTurn("hi\n@model-error 529"), false, 0)).toBeNull();
    expect(modelErrorFor([user("hi\n@model-error 529 call=2")], false, 0)).toBeNull();
    expect(modelErrorFor(toolTurn("hi\n@model-error 529 call=2"), false, 0)).toBe(529);
    expect(modelErrorFor(toolTurn("hi\n@model-error 529 summarize"), false, 0)).toBeNull();
    expect(modelErrorFor([user("[seq 1 user]\nhi\n@model-error 529 summarize")], true, 0)).toBe(529);
    expect(modelErrorFor([user("[seq 1 user]\nhi\n@model-error 529")], true, 0)).toBeNull();
    expect(modelErrorFor([user("hi\n@model-error 500 attempts=2")], false, 1)).toBe(500);
    expect(modelErrorFor([user("hi\n@model-error 500 attempts=2")], false, 2)).toBeNull();
  });

  it("a transient error (attempts=1) is absorbed by one SDK retry", async () => {
    const reply = await client(1).messages.create({
      model: "offline-200k",
      max_tokens: 200,
      messages: [user("hello\n@model-error 500 attempts=1")],
    });
    expect(reply.stop_reason).toBe("end_turn");
    await expect(
      client(0).messages.create({
        model: "offline-200k",
        max_tokens: 200,
        messages: [user("hello\n@model-error 500 attempts=1")],
      }),
    ).rejects.toMatchObject({ status: 500 });
  });

  it("fails a summarization request that carries the line", async () => {
    const ask = (text: string) =>
      client().messages.create({
        model: "offline-200k",
        max_tokens: 200,
        system: foldSystemPrompt(2_000),
        messages: [user(text)],
      });
    await expect(ask("[seq 3 user]\nnotes\n@model-error 529 summarize")).rejects.toMatchObject({ status: 529 });
    expect((await ask("[seq 3 user]\nnotes\n@model-error 529")).content.at(-1)).toMatchObject({ type: "text" });
  });
});
