// An in-turn compaction that cuts a tool result the model has not looked at yet keeps its image:
// only the text is cut, and the label says the image is kept. (Images the model has already seen
// go, with the label naming the call that shows them again.)
import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { toolResults } from "../blocks";
import { api, createConversation } from "./helpers";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const filler = (tag: string) => Array.from({ length: 290 }, (_, i) => `${tag} row ${i} reading`).join("\n");

describe("in-turn compaction of a result the model has not seen", () => {
  it("keeps the result's image and cuts only its text", async () => {
    const id = await createConversation({ model: "offline-32k", contextWindowTokens: 32_000 });
    const cities = ["Paris", "Oslo", "Rome", "Lima"];
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `four cities\n${cities.map((c) => `@tool get_weather {"city":"${c}"}`).join("\n")}`,
      tools: [weather],
    });
    const calls = paused.json.requires_action!.calls;
    expect(calls).toHaveLength(4);
    const first = filler("radar");
    expect(first.length).toBeGreaterThan(6_000);
    const resumed = await api(
      "POST",
      `/v1/conversations/${id}/tool-results`,
      {
        results: calls.map((c, i) => ({
          tool_use_id: c.id,
          content:
            i === 0
              ? [
                  { type: "text", text: first },
                  { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
                ]
              : filler(cities[i]),
        })),
      },
      { headers: { accept: "text/event-stream" } },
    );
    expect(resumed.status).toBe(200);
    expect(resumed.text).toContain("event: compaction_started");

    // The continuation's request: compacted, with the first result cut but its image still there.
    const [newest] = (await api("GET", `/v1/conversations/${id}/prompts?limit=1`)).json.data;
    expect(newest.compacted).toBe(true);
    const sent = (await api("GET", `/v1/conversations/${id}/prompts/${newest.id}`)).json as unknown as ModelRequest;
    const result = toolResults(sent.messages as WireMessage[]).find((b) => b.tool_use_id === calls[0].id)!;
    expect(typeof result.content).not.toBe("string");
    const blocks = result.content as ContentBlock[];
    const texts = blocks.flatMap((b) => (b.type === "text" ? [b.text] : []));
    expect(texts.join("\n")).toContain("TRUNCATED");
    expect(texts.join("\n").length).toBeLessThan(first.length);
    expect(blocks.filter((b) => b.type === "image")).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
    ]);
  });
});
