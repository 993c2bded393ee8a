// Shared by the fold tests that script the summarizer's reply: a conversation grown until its
// object leases a fold, the job it leased, and an SDK client whose fetch answers one Messages JSON.
import Anthropic from "@anthropic-ai/sdk";
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { FoldJob } from "../../core/jobs";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { createConversation, send } from "./helpers";

export const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

export async function leaseJob(id: string): Promise<string | null> {
  return runInDurableObject(stubOf(id), async (_i, state) => {
    const row = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0];
    return row ? (JSON.parse(row.value) as { jobId: string }).jobId : null;
  });
}

/** A conversation grown turn by turn until its object leases a fold: the job it sent. */
export async function leasedFold(settings: Record<string, unknown> = {}): Promise<FoldJob> {
  const id = await createConversation({ foldThresholdChars: 4000, ...settings });
  for (let i = 0; i < 40; i++) {
    await send(id, `turn ${i} on topic-${i}\n@reply-chars 900`);
    const jobId = await leaseJob(id);
    if (jobId)
      return { kind: "fold", jobId, tenantId: "dev", conversationId: id, requestedAt: new Date().toISOString() };
  }
  throw new Error("no fold dispatched");
}

/** A client whose every call answers `text` with `stopReason` (after `gate`, when given). */
export function scriptedReply(text: string, stopReason: string, opts: { gate?: Promise<void> } = {}) {
  const calls: unknown[] = [];
  const client = new Anthropic({
    apiKey: "offline",
    baseURL: OFFLINE_BASE_URL,
    maxRetries: 0,
    fetch: async (_url: string | URL | Request, init?: RequestInit) => {
      calls.push(JSON.parse(String(init?.body)));
      if (opts.gate) await opts.gate;
      return Response.json({
        id: "msg_scripted",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-5-5",
        content: [{ type: "text", text }],
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 1500, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
    },
  });
  return { client, calls };
}
