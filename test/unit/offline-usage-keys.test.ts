// The offline model's usage carries every key of the pinned SDK's `Usage` (required, possibly
// null): server_tool_use (null when no server tool ran), service_tier and speed, in the answer and
// in a stream's message_start; message_delta's usage carries server_tool_use (MessageDeltaUsage).
// And the platform's usage reader counts a null server_tool_use as zero.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { pickUsage } from "../../agent/model-reply";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const request = (body: Record<string, unknown>) => postOnFixtureDay({ ...HELLO, ...body });

async function usageOf(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await request(body);
  expect(response.status).toBe(200);
  return ((await response.json()) as { usage: Record<string, unknown> }).usage;
}

/** The data of a stream's first event of `type`. */
function eventData(text: string, type: string): Record<string, unknown> {
  const line = text.split("\n").find((l) => l.startsWith("data:") && l.includes(`"type":"${type}"`));
  expect(line, type).toBeDefined();
  return JSON.parse(line!.slice(5)) as Record<string, unknown>;
}

const SEARCH = {
  tools: [{ type: "web_search_20250305", name: "web_search" }],
  messages: [{ role: "user", content: "Find the tides.\n@web-search harbor tides" }],
};

describe("offline usage keys", () => {
  it("an answer's usage has server_tool_use (null without server tools), service_tier and speed", async () => {
    const plain = await usageOf({});
    expect(plain).toMatchObject({ server_tool_use: null, service_tier: "standard", speed: "standard" });
    expect(Object.keys(plain)).toEqual(expect.arrayContaining(["server_tool_use", "service_tier", "speed"]));

    const fast = await usageOf({ model: "claude-opus-5-5", speed: "fast" });
    expect(fast).toMatchObject({ service_tier: "standard", speed: "fast" });
    const standard = await usageOf({ model: "claude-opus-5-5", speed: "standard" });
    expect(standard.speed).toBe("standard");

    const searched = await usageOf(SEARCH);
    expect(searched.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });

  it("a stream's message_start usage has the same keys; message_delta carries server_tool_use", async () => {
    const text = await (await request({ stream: true })).text();
    const start = (eventData(text, "message_start").message as { usage: Record<string, unknown> }).usage;
    expect(start).toMatchObject({ server_tool_use: null, service_tier: "standard", speed: "standard" });
    const delta = eventData(text, "message_delta").usage as Record<string, unknown>;
    expect("server_tool_use" in delta).toBe(true);
    expect(delta.server_tool_use).toBeNull();

    const fast = await (await request({ model: "claude-opus-5-5", speed: "fast", stream: true })).text();
    expect((eventData(fast, "message_start").message as { usage: Record<string, unknown> }).usage.speed).toBe("fast");

    const searched = await (await request({ ...SEARCH, stream: true })).text();
    const searchedStart = (eventData(searched, "message_start").message as { usage: Record<string, unknown> }).usage;
    expect(searchedStart.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 0 });
    expect((eventData(searched, "message_delta").usage as Record<string, unknown>).server_tool_use).toEqual({
      web_search_requests: 1,
      web_fetch_requests: 0,
    });
  });

  it("the platform's usage reader takes a null server_tool_use as no server tool requests", async () => {
    const usage = (await usageOf({})) as unknown as Anthropic.Usage;
    expect(usage.server_tool_use).toBeNull();
    const picked = pickUsage(usage);
    expect(picked.web_search_requests ?? 0).toBe(0);
    expect(picked.web_fetch_requests ?? 0).toBe(0);
    expect(picked.input_tokens).toBe(usage.input_tokens);
  });
});
