// The rolling prefix summary inside workerd: dispatch from the DO, the summarizer's fold, the DO's
// validation of commits, and replay as summary + tail. The queue hop itself is exercised by the
// end-to-end suite; here the summarizer's job runs directly against the real DO.
import Anthropic from "@anthropic-ai/sdk";
import { createMessageBatch, createExecutionContext, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { consumeBatch } from "../../workers/summarizer/index";
import { runFoldJob } from "../../workers/summarizer/fold";
import { recordingClient } from "./recording-client";
import { api, createConversation, inConversation, modelCount, send, textOf, transcript, turnMessages } from "./helpers";
import { blocksIn, firstText } from "../blocks";
import type { ContentBlock, WireMessage } from "../../core/types";
import type { ConversationHead } from "../../services/record/conversation-head";
import type { FoldJob } from "../../core/jobs";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const meta = async (id: string) => (await api("GET", `/v1/conversations/${id}`)).json;

async function lease(id: string): Promise<{ jobId: string; expiresAt: number } | null> {
  return runInDurableObject(stubOf(id), async (_i, state) => {
    const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0];
    return row ? JSON.parse(row.value) : null;
  });
}

async function expireLease(id: string): Promise<void> {
  await runInDurableObject(stubOf(id), async (_i, state) => {
    state.storage.sql.exec("UPDATE kv SET value = json_set(value, '$.expiresAt', 0) WHERE key = 'fold_lease'");
  });
}

const jobFor = (id: string, jobId: string) => ({
  kind: "fold" as const,
  jobId,
  tenantId: "dev",
  conversationId: id,
  requestedAt: new Date().toISOString(),
});

/** A fold of `id` (grown until one is dispatched) whose model call is held until `release`: what lands meanwhile. */
async function heldFold(id: string): Promise<{ folding: ReturnType<typeof runFoldJob>; release: () => void }> {
  const { jobId } = await growUntilLease(id);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const rec = recordingClient({ gate });
  const folding = runFoldJob(jobFor(id, jobId), env as Env, { client: rec.client });
  while (!rec.requests.length) await new Promise((r) => setTimeout(r, 10));
  return { folding, release };
}

/** Sends turns of about `chars` chars each until the DO has taken a fold lease. */
async function growUntilLease(id: string, chars = 1500, maxTurns = 40): Promise<{ jobId: string }> {
  for (let i = 0; i < maxTurns; i++) {
    await send(id, `turn ${i} about topic-${i}, the flight plan.\n@reply-chars ${chars}`);
    const l = await lease(id);
    if (l) return l;
  }
  throw new Error("no fold dispatched");
}

describe("dispatch", () => {
  it("dispatches only past the threshold (strictly greater), and one fold at a time", async () => {
    const text = "threshold probe ".repeat(80);
    // The big turn first, then short ones: the fold would keep the last 8 messages and fold the rest.
    const play = async (id: string) => {
      await send(id, text);
      for (let i = 0; i < 5; i++) await send(id, `warm-up ${i}`);
    };
    const probe = await createConversation();
    await play(probe);
    const chars = (await meta(probe)).foldableChars;
    expect(chars).toBeGreaterThan(1000);
    expect(chars).toBeLessThan((await meta(probe)).unsummarizedChars);

    const atThreshold = await createConversation({ foldThresholdChars: chars });
    await play(atThreshold);
    expect((await meta(atThreshold)).foldableChars).toBe(chars);
    expect(await lease(atThreshold)).toBeNull();

    const justOver = await createConversation({ foldThresholdChars: chars - 1 });
    await play(justOver);
    const first = await lease(justOver);
    expect(first).not.toBeNull();
    expect((await meta(justOver)).foldInFlight).toBe(true);
    await send(justOver, "another turn while the fold is in flight");
    expect((await lease(justOver))!.jobId).toBe(first!.jobId);
  });

  it("lets a later turn send the same job again once a crashed job's lease expires", async () => {
    const id = await createConversation({ foldThresholdChars: 1000 });
    const first = await growUntilLease(id);
    await expireLease(id);
    await send(id, "after the crash");
    const second = await lease(id);
    expect(second!.jobId).toBe(first.jobId);
    expect(second!.expiresAt).toBeGreaterThan(Date.now());
    // Whichever message of the job comes first folds; the other, delivered late, changes nothing.
    expect(await runFoldJob(jobFor(id, first.jobId), env as Env)).toEqual({ applied: true, reason: "folded" });
    const late = await runFoldJob(jobFor(id, first.jobId), env as Env);
    expect(late).toEqual({ applied: false, reason: "stale job: not the fold in flight" });
    expect((await meta(id)).foldCount).toBe(1);
  });
});

describe("a fold", () => {
  it("writes one summary within the cap, keeps a user-started tail of at least 8, and touches no original", async () => {
    const id = await createConversation({ foldThresholdChars: 5000, summaryMaxChars: 800 });
    const { jobId } = await growUntilLease(id);
    const before = await transcript(id);
    const outcome = await runFoldJob(jobFor(id, jobId), env as Env);
    expect(outcome).toEqual({ applied: true, reason: "folded" });
    const m = await meta(id);
    expect(m.summary!.length).toBeGreaterThan(0);
    expect(m.summary!.length).toBeLessThanOrEqual(800);
    expect(m.foldCount).toBe(1);
    expect(m.foldInFlight).toBe(false);
    const after = await transcript(id);
    expect(after).toEqual(before);
    const b = after.findIndex((x) => x.id === m.summarizedThroughMessageId);
    expect(after[b].role).toBe("user");
    expect(after[b].content[0].type).toBe("text");
    expect(after.length - b).toBeGreaterThanOrEqual(8);
    expect(m.summarizedThroughMessage).toBe(after[b].seq - 1);
    // The head in R2 carries the same fields.
    const head = await (await env.BUCKET.get(`tenants/dev/conversations/${id}/head.json`))!.json<ConversationHead>();
    expect(head).toMatchObject({
      summary: m.summary,
      summarizedThroughMessage: m.summarizedThroughMessage,
      summarizedThroughMessageId: m.summarizedThroughMessageId,
    });

    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.messages[0].role).toBe("user");
    expect(firstText(replay.messages[0].content)).toContain(m.summary);
    expect(firstText(replay.messages[0].content)).toContain(`"conversation_id":"${id}"`);
    expect(firstText(replay.messages[0].content)).toMatch(/memory_search/);
    expect(replay.messages[1].role).toBe("assistant");
    expect(replay.messages[2]).toEqual({ role: "user", content: after[b].content });
    expect(replay.messages.length).toBe(2 + (after.length - b));

    // Folded messages stay readable byte for byte through the tool.
    const folded = after[1];
    const r = await send(id, `@tool conversation_read {"message_id":"${folded.id}"}`);
    const read = r.json.messages[2].content[0].content as string;
    expect(read.slice(read.indexOf("\n") + 1)).toBe(textOf(folded));
  });

  it("folds recursively: each fold prompt carries the previous summary, and there is always exactly one", async () => {
    const id = await createConversation({ foldThresholdChars: 4000, summaryMaxChars: 1000 });
    const summaries: string[] = [];
    for (let n = 0; n < 3; n++) {
      const { jobId } = await growUntilLease(id);
      const rec = recordingClient();
      expect((await runFoldJob(jobFor(id, jobId), env as Env, { client: rec.client })).applied).toBe(true);
      expect(rec.requests).toHaveLength(1);
      const prompt = JSON.stringify(rec.requests[0]);
      if (n === 0) expect(prompt).toContain("first fold");
      else expect(prompt).toContain(JSON.stringify(summaries[n - 1]).slice(1, -1));
      const m = await meta(id);
      summaries.push(m.summary!);
      expect(m.foldCount).toBe(n + 1);
      expect(typeof m.summary).toBe("string");
      expect(m.summary!.length).toBeLessThanOrEqual(1000);
    }
    const heads = await meta(id);
    expect(heads.summarizedThroughMessage).toBeGreaterThan(0);
  });

  it("keeps turns that land while the model call runs, and lands on the freshest state", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { folding, release } = await heldFold(id);
    const during1 = await send(id, "landed during the fold one");
    const during2 = await send(id, "landed during the fold two");
    release();
    expect((await folding).applied).toBe(true);
    const t = await transcript(id);
    const ids = t.map((m) => m.id);
    for (const m of [...during1.json.messages, ...during2.json.messages]) expect(ids).toContain(m.id);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const last = replay.messages[replay.messages.length - 1];
    // The reply as saved, less its thinking: the turn is over, so the next request carries none.
    expect(
      blocksIn(last as WireMessage).map(({ cache_control: _c, ...b }: ContentBlock & { cache_control?: unknown }) => b),
    ).toEqual(turnMessages(during2)[1].content.filter((b) => b.type !== "thinking"));
  });

  it("folds only what its request showed: messages past the prompt's budget stay in the tail", async () => {
    const id = await createConversation({ foldThresholdChars: 150_000, tailMessages: 2 });
    let n = 0;
    for (let call = 0; call < 4; call++) {
      const messages = Array.from({ length: 200 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        text: `marker-${n++} ${"lorem ipsum dolor ".repeat(11)}`,
      }));
      expect((await api("POST", `/v1/conversations/${id}/import`, { messages })).status).toBe(201);
    }
    const { jobId } = (await lease(id))!;
    const rec = recordingClient();
    expect(await runFoldJob(jobFor(id, jobId), env as Env, { client: rec.client })).toEqual({
      applied: true,
      reason: "folded",
    });
    const prompt = blocksIn(rec.requests[0].messages[0] as WireMessage)
      .map((b) => (b.type === "text" ? b.text : ""))
      .join("\n");
    expect(prompt).toMatch(/later messages omitted/);
    const through = (await meta(id)).summarizedThroughMessage as number;
    const unseen = Array.from({ length: through }, (_, i) => i + 1).filter((seq) => !prompt.includes(`[seq ${seq} `));
    expect(unseen).toEqual([]);
    // It still folded most of what it was given, and the next message after the cut is a prompt.
    expect(through).toBeGreaterThan(600);
    expect((await transcript(id))[through].role).toBe("user");
  });

  it("does not land a fold that would keep fewer than a tailMessages raised while it ran", async () => {
    const id = await createConversation({ foldThresholdChars: 4000, tailMessages: 8 });
    const { folding, release } = await heldFold(id);
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 40 } })).status).toBe(200);
    release();
    expect(await folding).toEqual({ applied: false, reason: "the boundary would keep fewer than tailMessages" });
    const m = await meta(id);
    expect(m.summarizedThroughMessage).toBeNull();
    expect(await lease(id)).toBeNull();
  });

  it("applies a job delivered three times exactly once", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await runFoldJob(jobFor(id, jobId), env as Env));
    expect(outcomes.map((o) => o.applied)).toEqual([true, false, false]);
    expect((await meta(id)).foldCount).toBe(1);
  });

  it("refuses a commit whose boundary is gone or would move backwards", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    const stub = stubOf(id);
    const ref = { tenantId: "dev", conversationId: id };
    const bad = await stub.commitFold(ref, {
      jobId,
      kind: "summary",
      summary: "x",
      boundaryMessageId: "msg_01M8VGHFT3DT8AZ8TEFFHNQA7S",
      boundarySeq: 3,
    });
    expect(bad).toEqual({ applied: false, reason: "boundary message not found" });
    const { jobId: second } = await growUntilLease(id);
    expect((await runFoldJob(jobFor(id, second), env as Env)).applied).toBe(true);
    const m = await meta(id);
    await growUntilLease(id);
    const { jobId: third } = (await lease(id))!;
    const t = await transcript(id);
    const back = await stub.commitFold(ref, {
      jobId: third,
      kind: "summary",
      summary: "x",
      boundaryMessageId: t[2].id,
      boundarySeq: 3,
    });
    expect(back).toEqual({ applied: false, reason: "boundary would not move forward" });
    expect((await meta(id)).summarizedThroughMessageId).toBe(m.summarizedThroughMessageId);
  });

  it("lands a summary holding half a character as well-formed text, so later turns still go out", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    const t = await transcript(id);
    const boundary = t.findLast((m, i) => m.role === "user" && i <= t.length - 9)!;
    const out = await stubOf(id).commitFold(
      { tenantId: "dev", conversationId: id },
      { jobId, kind: "summary", summary: "- cut at \ud83d", boundaryMessageId: boundary.id, boundarySeq: boundary.seq },
    );
    expect(out.applied).toBe(true);
    const summary = (await api("GET", `/v1/conversations/${id}`)).json.summary as string;
    expect(summary.isWellFormed()).toBe(true);
    expect((await send(id, "hello again")).status).toBe(200);
  });

  it("a request built from a head whose fold landed before the cache heard of it replays only the new tail", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    await growUntilLease(id);
    const [before, after, start] = await inConversation(id, (i) => {
      const head = i.record.head!;
      const tail = i.cache.replaySource(head);
      const boundary = tail[tail.length - 9];
      // The head a commit just set, as a turn's step may read it before the commit's `folded` call.
      const moved = { ...head, summarizedThroughMessage: boundary.seq - 1 };
      return [tail.length, i.cache.replaySource(moved).map((m) => m.seq), boundary.seq] as const;
    });
    expect(start).toBeGreaterThan(1);
    expect(after[0]).toBe(start);
    expect(after.length).toBeLessThan(before);
  });

  it("retries model failures through the queue and keeps the conversation working", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    const rec = recordingClient({ failWith: 529 });
    const batch = createMessageBatch<unknown>("context-chat-jobs", [
      { id: "f1", timestamp: new Date(), attempts: 2, body: jobFor(id, jobId) },
    ]);
    const ctx = createExecutionContext();
    await consumeBatch(batch, (job) =>
      runFoldJob(job as FoldJob, env as Env, { client: rec.client }).then(() => undefined),
    );
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["f1"]);
    expect(result.explicitAcks).toEqual([]);
    expect((await meta(id)).summary).toBeNull();
    expect((await send(id, "still answering")).status).toBe(200);
    // The lease still belongs to the failing job until it expires; the retry then succeeds.
    expect((await lease(id))!.jobId).toBe(jobId);
    expect((await runFoldJob(jobFor(id, jobId), env as Env)).applied).toBe(true);
  });

  it("meters a call that answered with an empty summary: paid for, though the delivery fails", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    const empty = new Anthropic({
      apiKey: "offline",
      baseURL: OFFLINE_BASE_URL,
      maxRetries: 0,
      fetch: async () =>
        Response.json({
          id: "msg_empty",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5-5",
          content: [{ type: "text", text: "  " }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 1200, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        }),
    });
    await expect(runFoldJob(jobFor(id, jobId), env as Env, { client: empty, attempts: 2 })).rejects.toThrow(
      /empty summary/,
    );
    // The delivery's row: `fold:<job>:<delivery count>:<call id>`.
    const row = await env.DB.prepare(
      `SELECT kind, input_tokens AS i, output_tokens AS o FROM usage_events WHERE substr(id, 1, ?) = ?`,
    )
      .bind(`fold:${jobId}:2:`.length, `fold:${jobId}:2:`)
      .first();
    expect(row).toEqual({ kind: "fold", i: 1200, o: 3 });
  });

  it("meters each delivery's call when a commit fails and the job is delivered again", async () => {
    const id = await createConversation({ foldThresholdChars: 4000 });
    const { jobId } = await growUntilLease(id);
    // The first delivery's commit fails after its model call answered.
    const ns = env.CONVERSATION;
    const failingCommit = {
      ...(env as Env),
      CONVERSATION: {
        idFromName: (name: string) => ns.idFromName(name),
        get: (doId: DurableObjectId) => {
          const real = ns.get(doId);
          return new Proxy(real, {
            get: (t, p) =>
              p === "commitFold"
                ? async () => {
                    throw new Error("commit lost");
                  }
                : Reflect.get(t, p),
          });
        },
      },
    } as unknown as Env;
    await expect(runFoldJob(jobFor(id, jobId), failingCommit, { attempts: 1 })).rejects.toThrow(/commit lost/);
    expect((await runFoldJob(jobFor(id, jobId), env as Env, { attempts: 2 })).applied).toBe(true);
    const rows = await env.DB.prepare(`SELECT id FROM usage_events WHERE substr(id, 1, ?) = ? ORDER BY id`)
      .bind(`fold:${jobId}:`.length, `fold:${jobId}:`)
      .all<{ id: string }>();
    // One row per delivery: `fold:<job>:<delivery count>:<call id>`.
    expect(rows.results.map((r) => r.id.split(":").slice(0, 3).join(":"))).toEqual([
      `fold:${jobId}:1`,
      `fold:${jobId}:2`,
    ]);
  });

  it("does not dispatch when the region has nowhere to cut, and a job that finds none releases its lease", async () => {
    const id = await createConversation({ foldThresholdChars: 1000 });
    const calls = Array.from({ length: 5 }, (_, i) => `@tool conversation_read {"from_seq":1,"to_seq":${i + 1}}`).join(
      "\n",
    );
    await send(id, `one long tool turn\n${calls}`);
    const m = await meta(id);
    expect(m.unsummarizedChars).toBeGreaterThan(1000);
    expect(m.foldableChars).toBe(0);
    expect(await lease(id)).toBeNull();
    // A job that arrives anyway (say, the region changed under it) folds nothing and frees the lease.
    await runInDurableObject(stubOf(id), async (_i, state) => {
      state.storage.sql.exec(
        "INSERT INTO kv (key, value) VALUES ('fold_lease', ?)",
        JSON.stringify({ jobId: "fold_manual", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
      );
    });
    const rec = recordingClient();
    const out = await runFoldJob(jobFor(id, "fold_manual"), env as Env, { client: rec.client });
    expect(out).toEqual({ applied: false, reason: "nothing to fold" });
    expect(rec.requests).toHaveLength(0);
    expect(await lease(id)).toBeNull();
    expect((await meta(id)).summary).toBeNull();
  });
});

describe("nothing is lost", () => {
  it("every original message hashes the same after many folds, and the rebuild paths agree", async () => {
    const id = await createConversation({ foldThresholdChars: 3000, summaryMaxChars: 600 });
    const digest = async (messages: unknown[]) => {
      const bytes = new TextEncoder().encode(JSON.stringify(messages));
      return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
    };
    const snapshots: { count: number; hash: string }[] = [];
    for (let n = 0; n < 4; n++) {
      const { jobId } = await growUntilLease(id, 900);
      const t = await transcript(id);
      snapshots.push({ count: t.length, hash: await digest(t) });
      expect((await runFoldJob(jobFor(id, jobId), env as Env)).applied).toBe(true);
    }
    const final = await transcript(id);
    for (const s of snapshots) expect(await digest(final.slice(0, s.count))).toBe(s.hash);
    expect((await meta(id)).foldCount).toBe(4);

    // Path 1, the replay endpoint; path 2, the request the model receives on the next turn.
    // The offline model reports the exact tokens it was sent, so the two must count the same.
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.messages[0].role).toBe("user");
    const next = "the next question";
    // Counted by the offline model's own count_tokens, as the model it stands in for counts (its tokenizer ratio).
    const expected = await modelCount(replay, next);
    const turn = await send(id, next);
    const u = turn.json.usage;
    expect(u!.input_tokens + u!.cache_read_input_tokens + u!.cache_creation_input_tokens).toBe(expected);
  });

  it("rebuilds a folded conversation from R2 with the same replay", async () => {
    const id = await createConversation({ foldThresholdChars: 3000 });
    const { jobId } = await growUntilLease(id);
    await runFoldJob(jobFor(id, jobId), env as Env);
    const replayBefore = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    const { evictDurableObject } = await import("cloudflare:test");
    await runInDurableObject(stubOf(id), async (_i, state) => {
      await state.storage.deleteAll();
    });
    await evictDurableObject(stubOf(id));
    expect((await api("GET", `/v1/conversations/${id}/replay`)).json).toEqual(replayBefore);
  });
});
