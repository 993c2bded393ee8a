// Streaming: message_start carries a Message whose stop_reason and stop_sequence are null; the stop
// sequence arrives in message_delta (https://platform.claude.com/docs/en/build-with-claude/streaming:
// every example's message_start has "stop_reason": null, "stop_sequence": null).
import { beforeEach, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

async function send(body: Record<string, unknown>): Promise<Response> {
  return postOnFixtureDay({
    ...HELLO,
    messages: [{ role: "user", content: "@reply-chars 400\nTell me something." }],
    stop_sequences: ["e"],
    ...body,
  });
}

it("message_start has stop_sequence null even when the reply stops at a stop sequence", async () => {
  const plain = (await (await send({})).json()) as { stop_reason: string; stop_sequence: string | null };
  expect(plain.stop_reason).toBe("stop_sequence");
  expect(plain.stop_sequence).toBe("e");

  const frames = (await (await send({ stream: true })).text()).split("\n\n").filter(Boolean);
  const data = (name: string) => {
    const frame = frames.find((f) => f.startsWith(`event: ${name}`));
    if (!frame) throw new Error(`no ${name} event`);
    return JSON.parse(frame.slice(frame.indexOf("data: ") + 6)) as Record<string, Record<string, unknown>>;
  };
  const start = data("message_start").message;
  expect(start.stop_reason).toBeNull();
  expect(start.stop_sequence).toBeNull();
  const delta = data("message_delta").delta;
  expect(delta.stop_reason).toBe("stop_sequence");
  expect(delta.stop_sequence).toBe("e");
});
