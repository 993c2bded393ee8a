// Jobs that travel through the job queue from a ConversationDO to the summarizer worker.
import { z } from "zod";

export const foldJobSchema = z.strictObject({
  kind: z.literal("fold"),
  jobId: z.string().min(1).max(64),
  tenantId: z.string().min(1).max(64),
  conversationId: z.string().min(1).max(64),
  requestedAt: z.string(),
});
export type FoldJob = z.infer<typeof foldJobSchema>;

/** Extract a page range of a PDF attachment into the cortex (one chunk of its first-search indexing). */
export const extractJobSchema = z.strictObject({
  kind: z.literal("extract"),
  tenantId: z.string().min(1).max(64),
  attachmentId: z.string().min(1).max(64),
  fromPage: z.number().int().min(1),
  toPage: z.number().int().min(1),
});
export type ExtractJob = z.infer<typeof extractJobSchema>;

/** Pages per extraction job: small enough that one job stays far inside an invocation's limits. */
export const EXTRACT_CHUNK_PAGES = 50;
/**
 * The pages of one PDF its page index covers at most (its first ones): the count comes from the
 * file, and a huge or wrong one must not flood the queue (durable-objects/conversation/tool-context.ts).
 */
export const MAX_INDEXED_PDF_PAGES = 50_000;

export const queueJobSchema = z.discriminatedUnion("kind", [foldJobSchema, extractJobSchema]);
export type QueueJob = z.infer<typeof queueJobSchema>;

/** One fold call's limit: within a queue consumer's 15 minutes of wall time. */
export const FOLD_CALL_TIMEOUT_MS = 10 * 60_000;
/** A queue consumer invocation's wall time: no delivery of a fold job runs longer, whatever its calls. */
export const FOLD_DELIVERY_MAX_MS = 15 * 60_000;
/** The longest backoff before a retried job's next delivery (retryDelaySeconds' cap). */
export const MAX_RETRY_DELAY_SECONDS = 600;

/** Exponential backoff for a retried job: 10 s, 20 s, 40 s ... capped at 10 minutes. */
export const retryDelaySeconds = (attempts: number): number =>
  Math.min(MAX_RETRY_DELAY_SECONDS, 10 * 2 ** Math.max(0, attempts - 1));
