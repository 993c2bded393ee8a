// Real prompts carry nothing meant for the offline model: the fold's and the in-turn state call's
// system prompts are plain instructions, and the offline model recognises them (and their cap and
// sections) from those words alone, while chat prompts stay chat.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { COMPACTION_SECTIONS, turnStateSystemPrompt } from "../../core/compactor";
import { buildFoldRequest } from "../../core/fold";
import { summarizeOptions } from "../../core/offline-model/summarize";
import { buildSystemPrompt, cacheScopeFor, scopedSystemText } from "../../core/system-prompt";
import type { StoredMessage } from "../../core/types";
import { SUB_AGENT_SYSTEM } from "../../agent/sub-agent";
import { stateCallRequests as stateCalls } from "./state-call";
import { catalogEntry } from "../../core/models/lookup";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

/** Lines that only the offline stand-in ever read. */
const OFFLINE_ONLY = [/\[offline-model/i, /^\s*summary-max-chars\s*:/im, /^\s*sections\s*:/im];
/** Every string in a request (system, messages, tools), checked as the model would read it. */
function expectNoOfflineHooks(request: unknown): void {
  const texts: string[] = [];
  JSON.stringify(request, (_k, v) => (typeof v === "string" && texts.push(v), v));
  expect(texts.length).toBeGreaterThan(2);
  for (const text of texts) for (const hook of OFFLINE_ONLY) expect(text).not.toMatch(hook);
}

const at = "2026-01-01T00:00:00Z";
const message = (seq: number, role: "user" | "assistant", text: string): StoredMessage => ({
  id: `msg_${seq}`,
  seq,
  role,
  createdAt: at,
  content: [{ type: "text", text }],
});

const TASK = "Reconcile acct_1 and acct_2";
/** The state call's requests over `turn`, on the test model. */
const stateCallRequests = (turn: StoredMessage[]) =>
  stateCalls({ entry: SONNET, model: "claude-test", task: TASK, turn });

async function stateCallRequest(): Promise<Anthropic.MessageCreateParamsNonStreaming> {
  const sent = await stateCallRequests([message(1, "user", TASK)]);
  expect(sent).toHaveLength(1);
  return sent[0];
}

describe("prompts sent to the real model", () => {
  it("no state call for a turn with nothing in it: its blank message would be refused", async () => {
    expect(await stateCallRequests([])).toEqual([]);
    expect(await stateCallRequests([message(1, "user", "   ")])).toHaveLength(1);
  });

  it("the fold request carries no offline-model hooks, and the offline model still reads it as a summary with its cap", () => {
    const request = buildFoldRequest({
      model: SONNET,
      previousSummary: "- earlier",
      folded: [message(3, "user", "Book FL-2291"), message(4, "assistant", "Booked.")],
      maxChars: 6_000,
    });
    expectNoOfflineHooks(request);
    expect(summarizeOptions(request)).toEqual({ maxChars: 6_000, sections: [] });
  });

  it("the in-turn state call carries no offline-model hooks, and the offline model reads its cap and sections from the words", async () => {
    const sent = await stateCallRequest();
    expectNoOfflineHooks(sent);
    expect(summarizeOptions(sent as never)).toEqual({ maxChars: 3_000, sections: [...COMPACTION_SECTIONS] });
    expect(summarizeOptions({ system: turnStateSystemPrompt(750) })).toEqual({
      maxChars: 750,
      sections: [...COMPACTION_SECTIONS],
    });
  });

  it("chat and sub-agent prompts are not taken for summarization requests, though they mention summaries", async () => {
    // As sent: opened with the tenant's cache scope line.
    const scope = await cacheScopeFor("ten_1");
    const chat = buildSystemPrompt({
      scope,
      capabilities: ["memory_search: find things"],
      memoryMap: "<memory_map>x</memory_map>",
    });
    expect(chat[0].text).toMatch(/summary/);
    expect(summarizeOptions({ system: chat })).toBeNull();
    expect(summarizeOptions({ system: SUB_AGENT_SYSTEM })).toBeNull();
    expect(summarizeOptions({ system: scopedSystemText(scope, SUB_AGENT_SYSTEM) })).toBeNull();
    expect(summarizeOptions({ system: undefined })).toBeNull();
  });
});
