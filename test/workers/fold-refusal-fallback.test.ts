// A fold whose summarization call is refused is asked again, once, of the conversation's
// `refusalFallbackModel`, as a turn is; the refused call and the fallback's each get a ledger row
// under the model that spent it. Without a fallback model the refusal fails the delivery as before.
import Anthropic from "@anthropic-ai/sdk";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leasedFold } from "./fold-scripted";
import { api } from "./helpers";

const REFUSER = "claude-sonnet-5-5";
const FALLBACK = "claude-opus-5-5";
const SUMMARY = "The user walked through topics 0 to 5 of the flight plan; nothing is open.";

/** A client on which each of `refusers` refuses (a billed category) and any other model answers `SUMMARY`. */
function refusedBy(...refusers: string[]) {
  const models: string[] = [];
  const client = new Anthropic({
    apiKey: "offline",
    baseURL: OFFLINE_BASE_URL,
    maxRetries: 0,
    fetch: async (_url: string | URL | Request, init?: RequestInit) => {
      const { model } = JSON.parse(String(init?.body)) as { model: string };
      models.push(model);
      const refuses = refusers.includes(model);
      return Response.json({
        id: `msg_${models.length}`,
        type: "message",
        role: "assistant",
        model,
        content: [{ type: "text", text: refuses ? "I can't help with that." : SUMMARY }],
        stop_reason: refuses ? "refusal" : "end_turn",
        stop_details: refuses ? { type: "refusal", category: "frontier_llm", explanation: null } : null,
        stop_sequence: null,
        usage: {
          input_tokens: refuses ? 1500 : 1700,
          output_tokens: refuses ? 7 : 40,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      });
    },
  });
  return { client, models };
}

async function foldRows(jobId: string): Promise<{ id: string; model: string; i: number; o: number }[]> {
  const rows = await env.DB.prepare(
    `SELECT id, model, input_tokens AS i, output_tokens AS o FROM usage_events WHERE substr(id, 1, ?) = ? ORDER BY model`,
  )
    .bind(`fold:${jobId}:`.length, `fold:${jobId}:`)
    .all<{ id: string; model: string; i: number; o: number }>();
  return rows.results;
}

describe("a fold whose summarization call is refused", () => {
  it("is asked again of refusalFallbackModel, whose summary lands, each call metered under its model", async () => {
    const job = await leasedFold({ refusalFallbackModel: FALLBACK });
    const { client, models } = refusedBy(REFUSER);
    expect(await runFoldJob(job, env as Env, { client, attempts: 1 })).toEqual({ applied: true, reason: "folded" });
    expect(models).toEqual([REFUSER, FALLBACK]);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.summary).toBe(SUMMARY);
    expect(meta.foldCount).toBe(1);
    expect(meta.foldInFlight).toBe(false);
    const rows = await foldRows(job.jobId);
    expect(rows.map((r) => [r.model, r.i, r.o])).toEqual([
      [FALLBACK, 1700, 40],
      [REFUSER, 1500, 7],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    for (const r of rows) expect(r.id).toMatch(new RegExp(`^fold:${job.jobId}:1:call_`));
  });

  it("asks the fallback only once: a refusal of it too fails the delivery, both calls metered", async () => {
    const job = await leasedFold({ refusalFallbackModel: FALLBACK });
    const { client, models } = refusedBy(REFUSER, FALLBACK);
    await expect(runFoldJob(job, env as Env, { client, attempts: 1 })).rejects.toThrow(/refused/);
    expect(models).toEqual([REFUSER, FALLBACK]);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.foldCount).toBe(0);
    expect(meta.foldInFlight).toBe(true);
    expect((await foldRows(job.jobId)).map((r) => r.model)).toEqual([FALLBACK, REFUSER]);
  });

  it("without a fallback model keeps today's behaviour: one call, the delivery fails, its row kept", async () => {
    const job = await leasedFold();
    const { client, models } = refusedBy(REFUSER);
    await expect(runFoldJob(job, env as Env, { client, attempts: 1 })).rejects.toThrow(/refused/);
    expect(models).toEqual([REFUSER]);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.foldCount).toBe(0);
    expect(meta.foldInFlight).toBe(true);
    expect((await foldRows(job.jobId)).map((r) => [r.model, r.i, r.o])).toEqual([[REFUSER, 1500, 7]]);
  });
});
