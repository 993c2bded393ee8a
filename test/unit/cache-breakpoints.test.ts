// The replay's cache breakpoints, measured through the offline model's prompt cache (which keeps
// the API's 20-block lookback): a step that adds more than 20 blocks still reads everything the
// request before it wrote, because that request's last message keeps a breakpoint.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { buildModelRequest } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { catalogEntry } from "../../core/models/lookup";
import type { StoredMessage } from "../../core/types";
import { makeClient } from "./offline-model-client";
import { storedMessage } from "../stored-messages";

beforeEach(() => resetOfflineCache());

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const msg = storedMessage;
/** One step of `n` parallel reads: the call message and the results message (2n blocks). */
const step = (tag: string, n: number): StoredMessage[] => {
  const ids = Array.from({ length: n }, (_, i) => `toolu_${tag}${i}`);
  return [
    msg(
      "assistant",
      ids.map((id, i) => ({ type: "tool_use", id, name: "conversation_read", input: { from_seq: i + 1 } })),
    ),
    msg(
      "user",
      ids.map((id) => ({
        type: "tool_result",
        tool_use_id: id,
        content: `${id}: ${"a line of the file. ".repeat(40)}`,
      })),
    ),
  ];
};
const request = (history: StoredMessage[]) => ({
  ...(buildModelRequest({
    model: SONNET,
    conversationId: "conv_cache",
    settings: defaultSettings(),
    system: [{ type: "text", text: "Rules of the house. ".repeat(200), cache_control: { type: "ephemeral" } }],
    tools: [],
    history,
  }).request as unknown as Anthropic.MessageCreateParamsNonStreaming),
  max_tokens: 1_024,
});

describe("cache breakpoints on the replay", () => {
  it("a step of 11 parallel calls (22 blocks) reads the whole prefix the step before wrote", async () => {
    const client = makeClient({ now: () => 1_700_000_000_000 });
    const h1 = [msg("user", [{ type: "text", text: "Read the whole file." }]), ...step("a", 2)];
    const first = await client.messages.create(request(h1));
    const written = first.usage.cache_creation_input_tokens ?? 0;
    expect(written).toBeGreaterThan(0);
    const second = await client.messages.create(request([...h1, ...step("b", 11)]));
    // Everything the first request wrote is read; only the new step is written.
    expect(second.usage.cache_read_input_tokens).toBe(written + (first.usage.cache_read_input_tokens ?? 0));
    // Four breakpoints at most: the system prompt's, the request before's last message, the last.
    const marks = JSON.stringify(request([...h1, ...step("b", 11)])).split('"cache_control"').length - 1;
    expect(marks).toBe(3);
  });
});
