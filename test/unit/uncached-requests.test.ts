// The model requests that carry a tenant's text after a system text every tenant shares, and no
// tenant cache scope (core/system-prompt.ts, CacheScope): the fold, the automatic title and the
// in-turn state call. They set no cache breakpoint, so the provider caches nothing of them and one
// tenant's request can never read what another's wrote (the cross-tenant cache side channel the
// turn's and the sub-agent's requests close with the scope line). Should one of them ever take a
// breakpoint, it must open its system with the tenant's scope first: this test then fails.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { stateCallRequests } from "./state-call";
import { buildFoldRequest } from "../../core/fold";
import { catalogEntry } from "../../core/models/lookup";
import { accountPromptCache, resetOfflineCache } from "../../core/offline-model/cache";
import type { WireRequest } from "../../core/offline-model/wire";
import { buildTitleRequest } from "../../core/title";
import type { StoredMessage } from "../../core/types";

const SONNET = catalogEntry("claude-sonnet-5-5")!;
/** A tenant's text, long enough that the cache would hold it if a breakpoint asked. */
const secret = `Draft the press release for the Acme–Globex merger at $41.50 a share ${"details. ".repeat(600)}`;
const message = (seq: number, role: "user" | "assistant", text: string): StoredMessage => ({
  id: `msg_${seq}`,
  seq,
  role,
  createdAt: "2026-01-01T00:00:00Z",
  content: [{ type: "text", text }],
});

/** What the compactor's state call sends over a turn whose task is the tenant's text. */
async function stateCallRequest(): Promise<Anthropic.MessageCreateParamsNonStreaming> {
  const sent = await stateCallRequests({
    entry: SONNET,
    model: SONNET.id,
    task: secret,
    turn: [message(1, "user", secret)],
  });
  expect(sent).toHaveLength(1);
  return sent[0];
}

/** The same request sent by two tenants: what the second one reads of what the first one wrote. */
function readBySecondSender(request: unknown): number {
  resetOfflineCache();
  const wire = request as WireRequest;
  accountPromptCache(wire, { now: 0 });
  return accountPromptCache(wire, { now: 1 }).usage.cache_read_input_tokens;
}

describe("requests without a tenant cache scope", () => {
  const requests: [string, () => Promise<unknown>][] = [
    [
      "the fold",
      async () =>
        buildFoldRequest({
          model: SONNET,
          previousSummary: null,
          folded: [message(1, "user", secret), message(2, "assistant", "Drafted.")],
          maxChars: 2_000,
        }),
    ],
    ["the automatic title", async () => buildTitleRequest(SONNET, { prompt: secret, reply: "Drafted." })],
    ["the in-turn state call", stateCallRequest],
  ];

  for (const [name, build] of requests)
    it(`${name} sets no cache breakpoint, so another tenant's same request reads nothing of it`, async () => {
      const request = await build();
      expect(JSON.stringify(request)).toContain("Acme–Globex");
      expect(JSON.stringify(request)).not.toContain("cache_control");
      expect(readBySecondSender(request)).toBe(0);
    });
});
