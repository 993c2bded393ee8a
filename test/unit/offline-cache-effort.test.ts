// The effort level and the thinking configuration key the messages tier of the prompt cache, by their
// effective values: https://platform.claude.com/docs/en/build-with-claude/thinking-troubleshooting
// ("Cache hits drop after changing thinking settings"): "the thinking configuration and the effort
// level (or its default) are part of the cached prompt prefix ... switching thinking modes, changing
// the effort value, and changing budget_tokens all invalidate message cache breakpoints ... setting a
// parameter explicitly to its default is equivalent to omitting it and does not invalidate."
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());
const LONG = Array.from({ length: 200 }, (_, i) => `Policy ${i}: keep summaries short and cite ids.`).join("\n");

async function usage(extra: Record<string, unknown>, model = "claude-sonnet-5-5") {
  const response = await postOnFixtureDay({
    model,
    max_tokens: 4096,
    messages: [{ role: "user", content: [{ type: "text", text: LONG, cache_control: { type: "ephemeral" } }] }],
    ...extra,
  });
  expect(response.status).toBe(200);
  const u = ((await response.json()) as { usage: Record<string, number> }).usage;
  return { read: u.cache_read_input_tokens, write: u.cache_creation_input_tokens };
}

describe("effort keys the message breakpoints", () => {
  it("a changed effort misses; the same effort again hits", async () => {
    const first = await usage({});
    expect(first.write).toBeGreaterThan(0);
    expect((await usage({})).read).toBe(first.write);
    const low = await usage({ output_config: { effort: "low" } });
    expect(low.read).toBe(0);
    expect(low.write).toBe(first.write);
    expect((await usage({ output_config: { effort: "low" } })).read).toBe(first.write);
  });

  it("the default effort set explicitly is the same as omitting it", async () => {
    const first = await usage({});
    expect((await usage({ output_config: { effort: "high" } })).read).toBe(first.write);
  });
});

describe("thinking keys the message breakpoints by its effective configuration", () => {
  it("adaptive set explicitly on Sonnet 5.5 (its default) is the same as omitting it", async () => {
    const first = await usage({});
    expect((await usage({ thinking: { type: "adaptive" } })).read).toBe(first.write);
  });

  it("disabled set explicitly on Sonnet 4.6 (thinking off by default) is the same as omitting it", async () => {
    const first = await usage({}, "claude-sonnet-4-6");
    expect((await usage({ thinking: { type: "disabled" } }, "claude-sonnet-4-6")).read).toBe(first.write);
  });

  it("switching the thinking mode still misses", async () => {
    await usage({}, "claude-sonnet-4-6");
    expect((await usage({ thinking: { type: "adaptive" } }, "claude-sonnet-4-6")).read).toBe(0);
  });
});
