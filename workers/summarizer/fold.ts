// One fold: read the unsummarized region from the conversation's DO, choose the mark, make the one
// summarization call, and commit the result back by RPC. The DO re-validates the commit against
// its freshest state, so a stale or redelivered job changes nothing.
import type Anthropic from "@anthropic-ai/sdk";
import { buildFoldRequest, capSummary, chooseFoldMark } from "../../core/fold";
import type { FoldJob } from "../../core/jobs";
import { createModelClient } from "../../core/model-client";
import type { FoldOutcome, FoldSource } from "../../durable-objects/conversation-do";

export interface FoldDeps {
  /** The model client; tests pass one that records requests. */
  client?: Anthropic;
}

export async function runFoldJob(job: FoldJob, env: Env, deps: FoldDeps = {}): Promise<FoldOutcome> {
  const ref = { tenantId: job.tenantId, conversationId: job.conversationId };
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(job.conversationId));
  // RPC typing cannot see through StoredMessage's `unknown` tool inputs; the shape is FoldSource.
  const source = (await stub.foldSource(ref, job.jobId)) as FoldSource | null;
  if (!source) return { applied: false, reason: "stale job: not the fold in flight" };

  const mark = chooseFoldMark(source.region, source.settings.tailMessages);
  if (mark === null) return stub.commitFold(ref, { jobId: job.jobId, kind: "nothing-to-fold" });
  const boundary = source.region[mark];
  const request = buildFoldRequest({
    model: source.settings.model,
    previousSummary: source.summary,
    folded: source.region.slice(0, mark),
    maxChars: source.settings.summaryMaxChars,
  });
  // No SDK retries: the queue owns retries, with backoff and a dead-letter queue at the end.
  const client = deps.client ?? createModelClient({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0 });
  const reply = await client.messages.create(request as unknown as Anthropic.MessageCreateParamsNonStreaming);
  const text = reply.content.map((b) => (b.type === "text" ? b.text : "")).join("").trim();
  if (!text) throw new Error("the model returned an empty summary");
  const summary = capSummary(text, source.settings.summaryMaxChars);
  return stub.commitFold(ref, { jobId: job.jobId, kind: "summary", summary, boundaryMessageId: boundary.id, boundarySeq: boundary.seq });
}
