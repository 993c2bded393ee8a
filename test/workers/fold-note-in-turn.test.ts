// A file uploaded while a turn waits on client tools has its note saved inside that turn, right
// after the step's results: prompt, tool_use, results, NOTE, reply. A fold never starts its tail on
// that note (ARCHITECTURE.md: the tail starts on a real user prompt), and a regenerate never takes
// it for the last prompt (docs/api-notes.md: an upload's note is not a prompt).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FoldJob } from "../../core/jobs";
import { isAttachmentNote } from "../../core/render";
import type { StoredMessage } from "../../core/types";
import { runFoldJob } from "../../workers/summarizer/fold";
import { upload } from "./attachment-helpers";
import { api, createConversation, inConversation, send, transcript } from "./helpers";
import { leaseJob, stubOf } from "./fold-scripted";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const QUESTION = "What is the weather in Paris? I need it for the trip plan.";

/** Runs every fold the conversation leases, until it leases none. */
async function drain(id: string): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const jobId = await leaseJob(id);
    if (!jobId) return;
    const job: FoldJob = { kind: "fold", jobId, tenantId: "dev", conversationId: id, requestedAt: "" };
    await runFoldJob(job, env as Env, {});
  }
}

/**
 * A conversation whose last turn paused on a client tool, had a file uploaded during the pause and
 * then got its result: its transcript, the note last but one (before the reply).
 */
async function pausedWithUpload(settings: Record<string, unknown>, warmUp: number): Promise<{ id: string }> {
  const id = await createConversation(settings);
  for (let i = 0; i < 4; i++) {
    await send(id, `warm up ${i}\n@reply-chars ${warmUp}`);
    await drain(id);
  }
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: `${QUESTION}\n@tool get_weather {"city":"Paris"}`,
    tools: [weather],
  });
  expect(paused.status, paused.text.slice(0, 300)).toBe(200);
  const call = (paused.json as { requires_action: { calls: { id: string }[] } }).requires_action.calls[0];
  expect((await upload(id, "itinerary.txt", "day 1: Louvre\nday 2: Versailles\n", "text/plain")).status).toBe(201);
  const resumed = await api("POST", `/v1/conversations/${id}/tool-results`, {
    results: [{ tool_use_id: call.id, content: "sunny, 21 C. ".repeat(100) }],
  });
  expect(resumed.status, resumed.text.slice(0, 300)).toBe(200);
  return { id };
}

const textOf = (m: StoredMessage) => m.content.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join(" ");

describe("a fold around the note of a file uploaded during a paused turn", () => {
  it("keeps the tail on the turn's prompt, and a regenerate runs that prompt again", async () => {
    const { id } = await pausedWithUpload({ foldThresholdChars: 1000, tailMessages: 2 }, 400);
    const before = await transcript(id);
    const question = before.find((m) => textOf(m).startsWith(QUESTION))!;
    const note = before.find((m) => isAttachmentNote(m))!;
    // prompt, tool_use, results, NOTE, reply: the note sits inside the turn.
    expect(note.seq).toBe(question.seq + 3);
    expect(before.at(-1)!.seq).toBe(note.seq + 1);
    await drain(id);
    // Two kept messages would start the tail on the note: the fold ends before the prompt instead.
    const head = (await api("GET", `/v1/conversations/${id}`)).json as { summarizedThroughMessage: number };
    expect(head.summarizedThroughMessage).toBe(question.seq - 1);
    const regen = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    expect(regen.status, regen.text.slice(0, 300)).toBe(200);
    const copy = (await transcript(id)).find((m) => m.seq === before.length + 1)!;
    expect(copy.role).toBe("user");
    expect(copy.content).toEqual(question.content);
  });

  it("refuses a regenerate as folded when a fold already cut before the note", async () => {
    // A boundary a fold committed before core/fold.ts kept such notes out of its cut: the tail
    // opens on the note, the prompt and its results folded away.
    const { id } = await pausedWithUpload({ foldThresholdChars: 1_000_000, tailMessages: 2 }, 40);
    const before = await transcript(id);
    const note = before.find((m) => isAttachmentNote(m))!;
    await inConversation(id, (i) =>
      i.store.putLease({ jobId: "fold_legacy", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    );
    const ref = { tenantId: "dev", conversationId: id };
    const committed = await stubOf(id).commitFold(ref, {
      jobId: "fold_legacy",
      kind: "summary",
      summary: "The user asked about the weather in Paris for a trip; it was sunny.",
      boundaryMessageId: note.id,
      boundarySeq: note.seq,
    });
    expect(committed.applied).toBe(true);
    const regen = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    expect(regen.status, regen.text.slice(0, 300)).toBe(409);
    expect((regen.json as { error: { type: string } }).error.type).toBe("regenerate_folded");
    expect((await transcript(id)).length).toBe(before.length);
  });
});
