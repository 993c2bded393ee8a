// budget_tokens may reach max_tokens with the interleaved-thinking beta header only on models whose
// manual mode interleaves. https://platform.claude.com/docs/en/build-with-claude/extended-thinking:
// budget_tokens must be "Less than `max_tokens`... The one exception is interleaved thinking";
// "Claude Sonnet 4.6: the beta header with manual `type: "enabled"` is still functional but deprecated";
// "Claude Opus 4.6: manual mode has no interleaved thinking at all."; "Claude Haiku 4.5 does not
// support interleaved thinking. On the Claude API, the beta header is accepted but ignored."
import { beforeEach, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());
const BUDGET_ERROR = "`max_tokens` must be greater than `thinking.budget_tokens`";

async function send(model: string, beta: boolean): Promise<{ status: number; message?: string }> {
  const response = await postOnFixtureDay(
    { ...HELLO, model, max_tokens: 2000, thinking: { type: "enabled", budget_tokens: 4000 } },
    beta ? { "anthropic-beta": "interleaved-thinking-2025-05-14" } : {},
  );
  const json = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: json.error?.message };
}

it.each(["claude-sonnet-4-6", "claude-opus-4-5"])(
  "%s: the header lets budget_tokens exceed max_tokens",
  async (model) => {
    expect((await send(model, false)).status).toBe(400);
    expect((await send(model, true)).status).toBe(200);
  },
);

it.each(["claude-opus-4-6", "claude-haiku-4-5"])(
  "%s: the header is ignored, so budget_tokens >= max_tokens stays a 400",
  async (model) => {
    const answer = await send(model, true);
    expect(answer.status).toBe(400);
    expect(answer.message).toContain(BUDGET_ERROR);
  },
);
