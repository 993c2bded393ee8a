// A conversation moved from one model to another and back, with thinking in its history. Each
// model reads some other models' thinking blocks (core/offline-model/thinking-seal.ts READERS): the
// one that cannot read a block drops it, and a later model that reads both gets them back in the
// order they were sent. The turns after every switch must go through, as the real API takes them.
import { describe, expect, it } from "vitest";
import { api, createConversation, send, transcript } from "./helpers";

async function switching(models: readonly string[]): Promise<string[]> {
  const id = await createConversation({ model: models[0] });
  const failures: string[] = [];
  for (const [n, model] of models.entries()) {
    if (n > 0) expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { model } })).status).toBe(200);
    const r = await send(id, `turn ${n} on ${model}: think it through`);
    if (r.status !== 200) failures.push(`${model}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  // Every reply kept its thinking: the switches did not make the platform drop it.
  const thinking = (await transcript(id)).filter(
    (m) => m.role === "assistant" && m.content.some((b) => b.type === "thinking"),
  );
  expect(thinking.length).toBe(models.length);
  return failures;
}

describe("switching models and back, thinking in the history", { timeout: 120_000 }, () => {
  for (const models of [
    ["claude-fable-5-1", "claude-opus-5-5", "claude-fable-5-1"],
    ["claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-5-5"],
    ["claude-mythos-5-2", "claude-fable-5-2", "claude-mythos-5-2"],
    ["claude-opus-5-5", "claude-fable-5-1", "claude-opus-5-5", "claude-fable-5-1"],
  ])
    it(models.join(" → "), async () => {
      expect(await switching(models)).toEqual([]);
    });
});
