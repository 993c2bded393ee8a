// A fold job. The fold itself (mark, excerpts, one model call, commit by RPC) is the rolling
// summary issue's; this worker already owns the queue, the retries and the route to the DO.
import type { FoldJob } from "../../core/jobs";

export async function runFoldJob(job: FoldJob, env: Env): Promise<void> {
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(job.conversationId));
  const meta = await stub.getMeta({ tenantId: job.tenantId, conversationId: job.conversationId });
  if (!meta) console.warn("fold job for a conversation that no longer exists", job.jobId);
}
