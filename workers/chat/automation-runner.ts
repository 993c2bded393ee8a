// The automation queue's consumer: each message is one run, executed as a turn on the
// automation's channel. A model failure is recorded on the run and acked — the next schedule
// slot is the retry, never a tight loop. Failures are isolated per message.
import type { TurnEvent } from "../../core/events";
import { channelObjectName } from "../../durable-objects/channel-do";
import { finishRun, startRun, type AutomationJob } from "./automations";
import { collectTurn } from "./turn-response";
import { startTurn } from "./turns";

export async function runAutomationBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const job = message.body as Partial<AutomationJob>;
      if (job?.kind !== "automation" || typeof job.runId !== "string") {
        console.error("dropping malformed automation job", message.id);
        message.ack();
        return;
      }
      try {
        await runAutomation(env, job.runId);
        message.ack();
      } catch (err) {
        // Infrastructure trouble (D1, the object): the queue retries; the run stays open until
        // the next tick closes it, so it can never run twice.
        console.error("automation run failed to execute", job.runId, err);
        message.retry();
      }
    }),
  );
}

export async function runAutomation(env: Env, runId: string): Promise<void> {
  const started = await startRun(env.DB, runId);
  if (!started) return; // already started or finished: a duplicate delivery
  const { automation } = started;
  if (!automation || automation.paused) {
    await finishRun(env.DB, runId, { status: "skipped", error: automation ? "paused" : "deleted" });
    return;
  }
  const channel = env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(automation.tenantId, automation.channel)));
  let { conversationId } = await channel.resolve(automation.tenantId, automation.channel);
  let events: ReadableStream<TurnEvent> | null;
  try {
    const prompt = [{ type: "text" as const, text: automation.prompt }];
    events = await startTurn(env, { tenantId: automation.tenantId, conversationId }, prompt);
    if (!events) {
      // The channel's conversation was deleted: the channel rotates and the run goes on there.
      ({ conversationId } = await channel.resolve(automation.tenantId, automation.channel, Date.now(), conversationId));
      events = await startTurn(env, { tenantId: automation.tenantId, conversationId }, prompt);
    }
  } catch (err) {
    await finishRun(env.DB, runId, { status: "failed", conversationId, error: err instanceof Error ? err.message : String(err) });
    return;
  }
  if (!events) {
    await finishRun(env.DB, runId, { status: "failed", conversationId, error: "the channel's conversation is gone" });
    return;
  }
  const turn = await collectTurn(events);
  await finishRun(env.DB, runId, {
    status: turn.error ? "failed" : "succeeded",
    conversationId,
    usage: turn.usage,
    error: turn.error ? `${turn.error.type}: ${turn.error.message}` : null,
  });
}
