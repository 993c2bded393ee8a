// The summarizer worker: consumes the job queue — folds, and the chunks of a PDF's first-search
// indexing. Each job is validated, run, and acked; a failed
// run is retried with backoff and, after max_retries (wrangler.toml), lands in the dead-letter
// queue. A malformed job is acked and logged: retrying garbage cannot make it valid.
import Anthropic from "@anthropic-ai/sdk";
import { envConfig } from "../../core/env-config";
import { MAX_RETRY_DELAY_SECONDS, queueJobSchema, retryDelaySeconds, type QueueJob } from "../../core/jobs";
import { runExtractJob } from "./extract";
import { runFoldJob } from "./fold";

export async function handleJob(job: QueueJob, env: Env, attempts = 1): Promise<void> {
  switch (job.kind) {
    case "fold": {
      const outcome = await runFoldJob(job, env, { attempts });
      console.log(`fold ${job.jobId} of ${job.conversationId}: ${outcome.reason}`);
      return;
    }
    case "extract":
      await runExtractJob(job, env);
      return;
  }
}

export async function consumeBatch(
  batch: MessageBatch<unknown>,
  run: (job: QueueJob, attempts: number) => Promise<void>,
): Promise<void> {
  for (const message of batch.messages) {
    const parsed = queueJobSchema.safeParse(message.body);
    if (!parsed.success) {
      console.error("dropping malformed queue job", message.id);
      message.ack();
      continue;
    }
    try {
      await run(parsed.data, message.attempts);
      message.ack();
    } catch (err) {
      console.error("queue job failed; retrying", parsed.data.kind, message.attempts, err);
      message.retry({ delaySeconds: retryDelay(err, message.attempts) });
    }
  }
}

/**
 * The wait before a failed job's next delivery: the queue's backoff, or longer when the model API
 * said when to come back (a 429's or 529's `retry-after`, in seconds), at most the backoff's cap. The
 * fold calls make no SDK retries of their own (the queue owns them), so the header is honoured here.
 */
export function retryDelay(err: unknown, attempts: number): number {
  const backoff = retryDelaySeconds(attempts);
  if (!(err instanceof Anthropic.APIError) || !err.headers) return backoff;
  const asked = Number(err.headers.get("retry-after"));
  if (!Number.isFinite(asked) || asked <= 0) return backoff;
  return Math.max(backoff, Math.min(MAX_RETRY_DELAY_SECONDS, Math.ceil(asked)));
}

export default {
  async queue(batch, env) {
    // A bad variable (core/env-config.ts) fails the whole batch with its name, not job by job.
    envConfig(env);
    await consumeBatch(batch, (job, attempts) => handleJob(job, env, attempts));
  },
} satisfies ExportedHandler<Env, unknown>;
