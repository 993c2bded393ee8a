// After an in-turn compaction, the compacted messages stand in for their originals for the rest of
// the turn. They keep the cache breakpoints the step's build places on them (the previous request's
// last message, the summary acknowledgement): without the first, a step adding more than 20 blocks
// finds nothing to read within the cache's 20-block lookback and writes the whole prefix again.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { blockOrigins, TurnCompactor } from "../../agent/turn-compaction";
import { resetOfflineCache } from "../../core/offline-model";
import { catalogEntry } from "../../core/models/lookup";
import { buildModelRequest, type SummaryState } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { storedMessage as msg } from "../stored-messages";
import { makeClient } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

const SONNET = catalogEntry("claude-sonnet-5-5")!;
const CONVERSATION = "conv_turn_cache";
/** A window where two steps of large reads are due for a pass, and a third step of small ones is not. */
const BUDGET = {
  contextWindowTokens: 60_000,
  outputReserveTokens: 2_000,
  compactTriggerRatio: 0.75,
  compactTargetRatio: 0.5,
  charsPerToken: 2,
};

/** One step of 12 parallel file reads of `chars` each: the call message and the results message. */
const step = (tag: string, chars: number): StoredMessage[] => {
  const ids = Array.from({ length: 12 }, (_, i) => `toolu_${tag}${i}`);
  return [
    msg(
      "assistant",
      ids.map((id, i) => ({ type: "tool_use", id, name: "file_read", input: { attachment_id: `att_${tag}${i}` } })),
    ),
    msg(
      "user",
      ids.map((id) => ({
        type: "tool_result",
        tool_use_id: id,
        content: `${id}: ${"a line of the file. ".repeat(chars / 20)}`,
      })),
    ),
  ];
};

/** The step's request; the system prompt without a breakpoint of its own when `summary` is null, so every read is the messages'. */
const build = (history: StoredMessage[], summary?: SummaryState | null): ModelRequest =>
  buildModelRequest({
    model: SONNET,
    conversationId: CONVERSATION,
    settings: defaultSettings(),
    system: [
      {
        type: "text",
        text: "Rules of the house. ".repeat(200),
        ...(summary === null ? {} : { cache_control: { type: "ephemeral" as const } }),
      },
    ],
    tools: [],
    history,
    summary,
  }).request;

const send = (client: Anthropic, r: ModelRequest) =>
  client.messages.create({ ...(r as unknown as Anthropic.MessageCreateParamsNonStreaming), max_tokens: 1_024 });

/** [message, block] of every block carrying a breakpoint. */
const marks = (r: ModelRequest): [number, number][] =>
  r.messages.flatMap((m, i) =>
    typeof m.content === "string"
      ? []
      : m.content.flatMap((b, j): [number, number][] => ("cache_control" in b && b.cache_control ? [[i, j]] : [])),
  );
const markedMessages = (r: ModelRequest) => marks(r).map(([i]) => i);
/** The last block of a message that may carry a breakpoint (never thinking, never empty text). */
const lastCacheable = (r: ModelRequest, i: number) =>
  (r.messages[i].content as ContentBlock[]).findLastIndex(
    (b) => b.type !== "thinking" && b.type !== "redacted_thinking" && !(b.type === "text" && b.text === ""),
  );

/** A turn of two large steps compacted at the second, then a step of 12 small results. */
async function compactedTurn(client: Anthropic, summary?: SummaryState | null) {
  const prompt = msg("user", [{ type: "text", text: "Read every file and compare them." }]);
  const h2 = [prompt, ...step("a", 5_500), ...step("b", 5_500)];
  const c = new TurnCompactor(BUDGET, client, SONNET, () => blockOrigins(CONVERSATION, [...h2]));
  const r2 = c.apply(build(h2, summary));
  expect(c.due(r2)).toBe(true);
  const pass = await c.compact(r2, h2);
  expect(pass.report.targets.length).toBeGreaterThan(0);
  expect(c.active).toBe(true);
  const h3 = [...h2, ...step("c", 300)];
  const built3 = build(h3, summary);
  const r3 = c.apply(built3);
  expect(c.due(r3)).toBe(false);
  return { c, h3, pass: pass.request, built3, r3 };
}

describe("breakpoints after an in-turn compaction", { timeout: 30_000 }, () => {
  it("the standing messages carry the build's breakpoints: the previous request's last message and the summary acknowledgement", async () => {
    const client = makeClient({ now: () => 1_700_000_000_000 });
    const summary = { summary: "Earlier: the user asked about the files.", throughSeq: 0 };
    const { c, h3, built3, r3 } = await compactedTurn(client, summary);
    // The build marks the acknowledgement (1), the previous request's last message (6) and the last (8).
    expect(markedMessages(built3)).toEqual([1, 6, 8]);
    // The compacted request keeps all three, one per message, on the message's last cacheable block
    // but for a pass's turn state (the next pass replaces it): within the API's four with the system's.
    expect(markedMessages(r3)).toEqual([1, 6, 8]);
    const [, [, atCarrier]] = marks(r3);
    const carrier = r3.messages[6].content as ContentBlock[];
    expect(JSON.stringify(carrier.at(-1))).toContain("<turn_state>");
    expect(atCarrier).toBe(carrier.length - 2);
    expect(marks(r3)[0][1]).toBe(lastCacheable(r3, 1));
    expect(marks(r3)[2][1]).toBe(lastCacheable(r3, 8));
    // The step after: only the build's marks again (the acknowledgement's among them), none left
    // behind on the standing messages, so they never pile up past the API's four.
    const r4 = c.apply(build([...h3, ...step("d", 300)], summary));
    expect(c.active).toBe(true);
    expect(markedMessages(r4)).toEqual([1, 8, 10]);
  });

  it("a step of 24 blocks after a pass reads the prefix the pass's request wrote", async () => {
    const client = makeClient({ now: () => 1_700_000_000_000 });
    const { pass, r3 } = await compactedTurn(client, null);
    expect(markedMessages(r3)).toEqual([4, 6]);
    const sent = await send(client, pass);
    expect(sent.usage.cache_creation_input_tokens ?? 0).toBeGreaterThan(0);
    const third = await send(client, r3);
    // Everything the pass's request wrote, its last message included, is read; only the new step is
    // written. (Without the breakpoint on the pass's last message, nothing at all is read.)
    expect(third.usage.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    expect(third.usage.cache_read_input_tokens).toBe(
      (sent.usage.cache_read_input_tokens ?? 0) + (sent.usage.cache_creation_input_tokens ?? 0),
    );
  });
});
