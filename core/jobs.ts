// Jobs that travel through the fold queue from a ConversationDO to the summarizer worker.
import { z } from "zod";

export const foldJobSchema = z.strictObject({
  kind: z.literal("fold"),
  jobId: z.string().min(1).max(64),
  tenantId: z.string().min(1).max(64),
  conversationId: z.string().min(1).max(64),
  requestedAt: z.string(),
});
export type FoldJob = z.infer<typeof foldJobSchema>;

export const queueJobSchema = z.discriminatedUnion("kind", [foldJobSchema]);
export type QueueJob = z.infer<typeof queueJobSchema>;

/** Exponential backoff for a retried job: 10 s, 20 s, 40 s ... capped at 10 minutes. */
export const retryDelaySeconds = (attempts: number): number => Math.min(600, 10 * 2 ** Math.max(0, attempts - 1));
