// The claims queue's consumer: each message is the rest of a cron tick that found more due
// automations than one invocation claims; it claims the next page (and, if that page is full too,
// sends the next message). A failure is retried by the queue; a slot is never claimed twice.
import { claimDueRuns, type ClaimContinuation } from "../../services/automations";

export const AUTOMATION_CLAIMS_QUEUE = "context-chat-automation-claims";

const tickOf = (message: Message<unknown>): number | null => {
  const job = message.body as Partial<ClaimContinuation>;
  return job?.kind === "claim" && Number.isSafeInteger(job.scheduledTime) ? job.scheduledTime! : null;
};

export async function runClaimBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const tick = tickOf(message);
    if (tick === null) {
      console.error("dropping malformed claim continuation", message.id);
      message.ack();
      continue;
    }
    await claimDueRuns(env, tick).then(
      () => message.ack(),
      () => message.retry(),
    );
  }
}
