// Which model reads which model's thinking blocks (core/offline-model/thinking-seal.ts `canRead`),
// against the docs' read matrix on the Claude API: a readable block is kept and runs the prefix
// check, an unreadable one is dropped silently. Sources are on each entry of the readers table.
import { beforeEach, describe, expect, it } from "vitest";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";
import { resolveModel } from "../../core/offline-model/model";
import { canRead } from "../../core/offline-model/thinking-seal";

beforeEach(() => resetOfflineCache());

const DAY = "2026-12-03";
const DEC_3 = Date.UTC(2026, 11, 3, 12);

function reads(reader: string, producer: string): boolean {
  const profile = resolveModel(reader, DAY);
  if (!profile) throw new Error(`no model ${reader} on ${DAY}`);
  return canRead(profile, producer);
}

async function post(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await handleMessagesRequest(
    new Request("https://offline-model.invalid/v1/messages", { method: "POST", body: JSON.stringify(body) }),
    { now: () => DEC_3 },
  );
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** A reply of `producer` with thinking, then the same history with a changed system prompt sent to `reader`. */
async function switchWithChangedSystem(producer: string, reader: string): Promise<{ status: number; message: string }> {
  const question = { role: "user", content: "A question about rivers." };
  const first = await post({ model: producer, max_tokens: 1024, system: "Be brief.", messages: [question] });
  expect(first.status).toBe(200);
  const content = first.json.content as { type: string }[];
  expect(content.some((block) => block.type === "thinking")).toBe(true);
  const second = await post({
    model: reader,
    max_tokens: 1024,
    system: "Be thorough.",
    messages: [question, { role: "assistant", content }, { role: "user", content: "Go on." }],
  });
  const error = second.json.error as { message?: string } | undefined;
  return { status: second.status, message: error?.message ?? "" };
}

describe("thinking readers: the documented read matrix", () => {
  it("Mythos 5.2 reads Fable 5.2 blocks; no other model does", () => {
    expect(reads("claude-mythos-5-2", "claude-fable-5-2")).toBe(true);
    for (const reader of [
      "claude-fable-5-1",
      "claude-mythos-5-1",
      "claude-opus-5-5",
      "claude-sonnet-5-5",
      "claude-haiku-5-5",
    ])
      expect(reads(reader, "claude-fable-5-2"), reader).toBe(false);
  });

  it("Fable 5.1 and Mythos 5.1 read each other, earlier models and (on the Claude API) Opus 5.5", () => {
    for (const reader of ["claude-fable-5-1", "claude-mythos-5-1"]) {
      for (const producer of [
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-opus-5-5",
        "claude-opus-5",
        "claude-sonnet-5",
        "claude-fable-5",
        "claude-mythos-5",
        "claude-opus-4-8",
        "claude-haiku-4-5",
      ])
        expect(reads(reader, producer), `${reader} reads ${producer}`).toBe(true);
      for (const producer of ["claude-sonnet-5-5", "claude-fable-5-2", "claude-mythos-5-2"])
        expect(reads(reader, producer), `${reader} reads ${producer}`).toBe(false);
    }
  });

  it("Opus 5.5 reads Opus 5, earlier Opus/Sonnet/Haiku and Sonnet 5.5, no Fable or Mythos block", () => {
    for (const producer of [
      "claude-opus-5",
      "claude-sonnet-5",
      "claude-opus-4-8",
      "claude-haiku-4-5",
      "claude-sonnet-5-5",
    ])
      expect(reads("claude-opus-5-5", producer), producer).toBe(true);
    for (const producer of [
      "claude-fable-5-1",
      "claude-mythos-5-1",
      "claude-fable-5",
      "claude-mythos-5",
      "claude-fable-5-2",
    ])
      expect(reads("claude-opus-5-5", producer), producer).toBe(false);
  });

  it("Sonnet 5.5 (and the test models imitating it) keep their list; Opus 5 does not read Fable 5.1", () => {
    for (const reader of ["claude-sonnet-5-5", "offline-200k"]) {
      expect(reads(reader, "claude-sonnet-5"), reader).toBe(true);
      expect(reads(reader, "claude-opus-5"), reader).toBe(false);
      expect(reads(reader, "claude-opus-5-5"), reader).toBe(false);
    }
    expect(reads("claude-opus-5", "claude-fable-5-1")).toBe(false);
    // A dated alias resolves to the catalog id, which is what blocks are signed with.
    expect(reads("claude-haiku-4-5-20251001", "claude-haiku-4-5")).toBe(true);
  });
});

describe("thinking readers: a readable block runs the prefix check, an unreadable one is dropped", () => {
  it("a Fable 5.2 block with a changed prefix is the 400 on Mythos 5.2 it is on Fable 5.2", async () => {
    const same = await switchWithChangedSystem("claude-fable-5-2", "claude-fable-5-2");
    expect(same.status).toBe(400);
    const switched = await switchWithChangedSystem("claude-fable-5-2", "claude-mythos-5-2");
    expect(switched.status).toBe(400);
    expect(switched.message).toBe(same.message);
    expect(switched.message).toContain("The block is bound to a different conversation.");
  });

  it("an Opus 5.5 block with a changed prefix is a 400 on Fable 5.1; a Fable 5.1 block is dropped on Opus 5.5", async () => {
    expect((await switchWithChangedSystem("claude-opus-5-5", "claude-fable-5-1")).status).toBe(400);
    expect((await switchWithChangedSystem("claude-fable-5-1", "claude-opus-5-5")).status).toBe(200);
  });
});
