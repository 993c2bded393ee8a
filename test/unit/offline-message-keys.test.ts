// The offline model's message carries every key of the pinned SDK's `Message` (each required,
// possibly null), in the answer and in a stream's message_start, as the API's does. The key list
// is checked against the SDK's type by the compiler: a key the SDK adds fails the typecheck here.
import type Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

/** Every key of the SDK's Message, and no other (the compiler holds this to `keyof Anthropic.Message`). */
const MESSAGE_KEYS: Record<keyof Anthropic.Message, true> = {
  id: true,
  container: true,
  content: true,
  diagnostics: true,
  model: true,
  role: true,
  stop_details: true,
  stop_reason: true,
  stop_sequence: true,
  type: true,
  usage: true,
};

describe("offline message keys", () => {
  it("an answer has every key of the SDK's Message; container and diagnostics null (no container tool, no diagnostics asked)", async () => {
    const response = await postOnFixtureDay(HELLO);
    expect(response.status).toBe(200);
    const message = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(message).sort()).toEqual(Object.keys(MESSAGE_KEYS).sort());
    expect(message).toMatchObject({ container: null, diagnostics: null });
  });

  it("a stream's message_start message has the same keys", async () => {
    const text = await (await postOnFixtureDay({ ...HELLO, stream: true })).text();
    const line = text.split("\n").find((l) => l.startsWith("data:") && l.includes('"type":"message_start"'));
    const start = (JSON.parse(line!.slice(5)) as { message: Record<string, unknown> }).message;
    expect(Object.keys(start).sort()).toEqual(Object.keys(MESSAGE_KEYS).sort());
    expect(start).toMatchObject({ container: null, diagnostics: null });
  });
});
