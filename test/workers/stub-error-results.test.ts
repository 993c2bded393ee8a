// A large error result is dead weight like any other: older than the last 2 exchanges it is replaced
// by its recovery stub (which keeps is_error), and a protected one larger than the in-turn target is
// cut with its label, so a 250k-char error posted by a client does not fail every turn after it.
import { describe, expect, it } from "vitest";
import type { ModelRequest, ToolResultBlock, WireMessage } from "../../core/types";
import { resultText, toolResults } from "../blocks";
import { api, createConversation, send, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** Deterministic words that do not repeat in runs, so no tokenizer packs them. */
function randomWords(chars: number, seed: number): string {
  const words: string[] = [];
  let x = seed;
  let n = 0;
  while (n < chars) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    const word = x.toString(36).slice(0, 3 + (x % 6));
    words.push(word);
    n += word.length + 1;
  }
  return words.join(" ").slice(0, chars).trimEnd();
}

async function lastRequest(id: string): Promise<ModelRequest> {
  const [newest] = (await api("GET", `/v1/conversations/${id}/prompts?limit=1`)).json.data;
  return (await api("GET", `/v1/conversations/${id}/prompts/${newest.id}`)).json as unknown as ModelRequest;
}

const resultsOf = (request: ModelRequest): ToolResultBlock[] => toolResults(request.messages as WireMessage[]);

describe("error tool results", () => {
  it("a 250k-char error result posted by a client fails no turn after it", async () => {
    const id = await createConversation({
      model: "offline-64k",
      contextWindowTokens: 64_000,
      outputReserveTokens: 4_000,
    });
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `check the weather\n@tool get_weather {"city":"Paris"}`,
      tools: [weather],
    });
    const [call] = paused.json.requires_action!.calls;
    const resumed = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: randomWords(250_000, 7), is_error: true }],
    });
    expect(resumed.status, resumed.text).toBe(200);
    for (let i = 0; i < 5; i++) {
      const r = await send(id, `next question ${i}`);
      expect(r.status, r.text).toBe(200);
    }
    // Stored whole, whatever the requests carried.
    const stored = toolResults(await transcript(id)).find((b) => b.tool_use_id === call.id)!;
    expect(stored.is_error).toBe(true);
    expect(resultText(stored).length).toBeGreaterThan(249_990);
  });

  it("stubs a stale error result like a normal one, keeping is_error, and conversation_read returns it", async () => {
    const id = await createConversation();
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `two cities\n@tool get_weather {"city":"Paris"}\n@tool get_weather {"city":"Oslo"}`,
      tools: [weather],
    });
    const [failed, fine] = paused.json.requires_action!.calls;
    const errorText = randomWords(51_000, 11);
    const normalText = randomWords(51_000, 13);
    const resumed = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [
        { tool_use_id: failed.id, content: errorText, is_error: true },
        { tool_use_id: fine.id, content: normalText },
      ],
    });
    expect(resumed.status, resumed.text).toBe(200);
    for (let i = 0; i < 4; i++) expect((await send(id, `later ${i}`)).status).toBe(200);

    const sent = resultsOf(await lastRequest(id));
    const error = sent.find((b) => b.tool_use_id === failed.id)!;
    const normal = sent.find((b) => b.tool_use_id === fine.id)!;
    expect(resultText(normal).slice(0, 60)).toMatch(/^\[stale tool result replaced by this stub: get_weather/);
    expect(resultText(error).slice(0, 60)).toMatch(/^\[stale tool result replaced by this stub: get_weather/);
    expect(resultText(error).length).toBeLessThan(1_000);
    expect(error.is_error).toBe(true);
    expect(normal.is_error).toBeUndefined();

    // The stub names the call that returns the original.
    const read = resultText(error).match(/conversation_read (\{[^}]*\})/)![1];
    expect((await send(id, `restore it\n@tool conversation_read ${read}`)).status).toBe(200);
    const restored = toolResults(await transcript(id)).at(-1)!;
    expect(restored.is_error).toBeFalsy();
    expect(resultText(restored)).toContain(errorText.slice(0, 2_000));
  });
});
