// One fold: ask the conversation's DO for the fold it planned (the excerpts of the messages it
// folds and their boundary, never the messages themselves), make the one summarization call, and
// commit the result back by RPC. The DO re-validates the commit against its freshest state, so a
// stale or redelivered job changes nothing.
import { wellFormedDeep } from "../../core/text-cut";
import Anthropic from "@anthropic-ai/sdk";
import { buildFoldRequest, capSummary, type FoldPlan, shrinkFoldBudget } from "../../core/fold";
import { FOLD_CALL_TIMEOUT_MS, type FoldJob } from "../../core/jobs";
import { sortableId } from "../../core/ids";
import { createModelClient } from "../../core/model-client";
import type { ModelEntry } from "../../core/models/catalog";
import { utcDay } from "../../core/models/lookup";
import { settingsOnModel } from "../../core/settings";
import { zeroUsage, type Usage } from "../../core/types";
import { billedUsage } from "../../agent/model-reply";
import { resolveTurnModel } from "../../services/models/resolve";
import { recordUsage } from "../../services/usage";
import type {
  ConversationDO,
  FoldCommit,
  FoldOutcome,
  FoldSource,
} from "../../durable-objects/conversation/conversation-do";
import type { FoldUsage } from "../../durable-objects/conversation/fold-coordinator";

export interface FoldDeps {
  /** The model client; tests pass one that records requests. */
  client?: Anthropic;
  /** The queue's delivery count of this job's message (1 on the first delivery). */
  attempts?: number;
}

/**
 * From this delivery of a job on, a fold whose model call fails commits a deterministic summary
 * instead. Deliveries are counted over every message that carried the job (FoldSource.delivery).
 */
export const FOLD_FALLBACK_ATTEMPT = 4;
/** Overflow 400s answered by shrinking the excerpts, within one delivery. */
const OVERFLOW_RETRIES = 3;

export async function runFoldJob(job: FoldJob, env: Env, deps: FoldDeps = {}): Promise<FoldOutcome> {
  const ref = { tenantId: job.tenantId, conversationId: job.conversationId };
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(job.conversationId));
  // The object plans the fold and sends its excerpts, never the messages: an RPC value is capped
  // at 32 MiB, and a region of large messages (images, tool results) would pass it.
  const fetchSource = async (budgetChars?: number): Promise<FoldSource | null> =>
    stub.foldSource(ref, job.jobId, budgetChars);
  const source = await fetchSource();
  if (!source) return { applied: false, reason: "stale job: not the fold in flight" };
  const { plan, settings } = source;
  // The job's delivery, counted by its lease over every message that carried it: a job sent again
  // after its lease expired is a new message to the queue, whose count starts over at 1. The
  // queue's count when larger (an object that does not count, a lease taken before it did).
  const delivery = Math.max(source.delivery ?? 1, deps.attempts ?? 1);
  if (!plan) return stub.commitFold(ref, { jobId: job.jobId, kind: "nothing-to-fold" });
  // No SDK retries: the queue owns retries, with backoff and a dead-letter queue at the end.
  // Without a configured model this throws before the fallback below can apply: a missing key is
  // not a region the model keeps failing on, so the job retries and ends in the dead-letter queue
  // rather than committing a summary no model wrote.
  const client = deps.client ?? createModelClient(env, { maxRetries: 0 });
  // A retired model's replacement summarizes, as it answers the conversation's turns, on the settings
  // a turn's move leaves (record.moveToModel): a refusal fallback that is the replacement is none.
  const model = await resolveTurnModel(env, settings.model, client);
  if (!model.ok) throw new Error(`fold ${job.jobId}: ${model.message}`);
  const moved = model.movedFrom
    ? settingsOnModel(settings, { patch: { model: model.entry.id }, from: null, to: model.entry })
    : settings;
  // The usage row of this delivery's call. Queues deliver at least once, and a job is sent again
  // when its lease expires, so two deliveries of one job can both hold the lease's source and both
  // call the model: each call is paid for, so each gets a row of its own, minted once (a retried
  // write of the row stays one row).
  const rowId = () => `fold:${job.jobId}:${delivery}:${sortableId("call")}`;
  const usageId = rowId();
  // Priced and filed under the model that answered: after a refusal, the fallback's call is its own.
  const paid = (spent: { usage: Usage; model: ModelEntry }, id = usageId): FoldUsage | undefined =>
    spentNothing(spent.usage) ? undefined : { id, model: spent.model.id, usage: spent.usage };
  const commit = (c: FoldCommit) => commitWithUsage({ env, job, stub }, c);
  // After a refusal the settings' fallback model is asked the same fold, once, as a turn's would be.
  let fallback = moved.refusalFallbackModel;
  const fallBack = async (): Promise<ModelEntry | null> => {
    if (!fallback) return null;
    const resolved = await resolveTurnModel(env, fallback, client);
    fallback = null;
    if (resolved.ok) return resolved.entry;
    console.error(`fold ${job.jobId}: the refusal fallback ${settings.refusalFallbackModel}: ${resolved.message}`);
    return null;
  };
  // The refused call was paid for (unless its category is not billed): its row, of the refuser's
  // model, is metered before the fallback is asked, whatever becomes of that call.
  const refused = async (call: { usage: Usage; model: ModelEntry }): Promise<void> => {
    const spent = paid(call, rowId());
    if (spent) await commit({ jobId: job.jobId, kind: "spent", usage: spent }).catch(() => undefined);
  };
  let summary: string;
  let spent = { usage: zeroUsage(), model: model.entry };
  let boundary: { id: string; seq: number };
  try {
    const done = await summarize(client, {
      model: model.entry,
      source: { ...source, plan },
      refetch: fetchSource,
      refusal: { fallBack, refused },
    });
    // The lease was lost, or the region left nothing to fold, while an overflow shrank the budget.
    if (!done) return stub.commitFold(ref, { jobId: job.jobId, kind: "nothing-to-fold" });
    summary = done.summary;
    spent = { usage: done.usage, model: done.model };
    // The fold ends where the plan its request showed ends (planFold: nothing unseen is folded).
    boundary = done.source.region[done.source.plan.cut];
  } catch (err) {
    // A call that answered but could not be used was still paid for: its row, per delivery.
    if (err instanceof SpentCallError) spent = { usage: err.usage, model: err.model };
    // A region the model keeps failing on must not stop folding forever: after a few deliveries
    // (with the queue's backoff between them) the fold commits a deterministic summary instead.
    if (delivery < FOLD_FALLBACK_ATTEMPT || source.fallbackSummary === null || isKeyProblem(err)) {
      const row = paid(spent);
      // Metered by the object before the queue retries; the job fails with the model's error.
      if (row) await commit({ jobId: job.jobId, kind: "spent", usage: row }).catch(() => undefined);
      throw err;
    }
    console.error(`fold ${job.jobId}: the model failed on delivery ${delivery}; committing a fallback summary`, err);
    summary = source.fallbackSummary;
    boundary = source.region[plan.mark];
  }
  // The call is paid for whether or not the commit applies: its row travels with the commit and the
  // object meters it through its outbox, whose alarm retries a failed D1 write, before it answers.
  // One row per delivery and model (a commit that failed is delivered again, and that delivery's call
  // is another; a refused call answered by the fallback model was metered on its own, above).
  return commit({
    jobId: job.jobId,
    kind: "summary",
    summary,
    boundaryMessageId: boundary.id,
    boundarySeq: boundary.seq,
    usage: paid(spent),
  });
}

/**
 * The provider refused the key itself (401 authentication_error, 403 permission_error): like a
 * missing key, not a region the model keeps failing on, so the job retries and ends in the
 * dead-letter queue rather than committing a summary no model wrote.
 */
const isKeyProblem = (err: unknown): boolean =>
  err instanceof Anthropic.AuthenticationError || err instanceof Anthropic.PermissionDeniedError;

/** A model call that answered, and was paid for, but whose answer could not be used. */
class SpentCallError extends Error {
  constructor(
    message: string,
    readonly usage: Usage,
    /** The model that answered (and is billed for it). */
    readonly model: ModelEntry,
  ) {
    super(message);
  }
}

/** No tokens of any kind: a call that writes no ledger row. */
const spentNothing = (u: Usage): boolean =>
  !(u.input_tokens || u.output_tokens || u.cache_read_input_tokens || u.cache_creation_input_tokens);

/**
 * The commit RPC with the delivery's usage row. Should the RPC fail, the object may never have
 * seen the row: it is written here too (once, by its id) before the error goes to the queue, whose
 * redelivery is another call with a row of its own.
 */
async function commitWithUsage(
  to: { env: Env; job: FoldJob; stub: DurableObjectStub<ConversationDO> },
  commit: FoldCommit,
): Promise<FoldOutcome> {
  const { env, job, stub } = to;
  try {
    return await stub.commitFold({ tenantId: job.tenantId, conversationId: job.conversationId }, commit);
  } catch (err) {
    if (commit.usage)
      await recordUsage(env.DB, {
        tenantId: job.tenantId,
        conversationId: job.conversationId,
        kind: "fold",
        day: utcDay(),
        ...commit.usage,
      }).catch((e) => console.error(`fold ${job.jobId}: usage not recorded`, e));
    throw err;
  }
}

/** A fold source with a plan: a region that has somewhere to cut. */
type PlannedSource = FoldSource & { plan: FoldPlan };

/** What a refused fold call may do: ask the settings' fallback model (null: none), after metering the refusal. */
interface RefusalFallback {
  fallBack: () => Promise<ModelEntry | null>;
  refused: (call: { usage: Usage; model: ModelEntry }) => Promise<void>;
}

/**
 * The one summarization call, held to the cap. The excerpts fit the model's window as the settings
 * state it; a provider overflow 400 (the window is smaller than stated) asks the object for the
 * fold at a smaller budget and calls again. A refusal is asked again of the refusal fallback model,
 * once, which then answers the rest of the fold. Null when the object then has no fold for the job.
 */
async function summarize(
  client: Anthropic,
  fold: {
    model: ModelEntry;
    source: PlannedSource;
    refetch: (budgetChars: number) => Promise<FoldSource | null>;
    refusal: RefusalFallback;
  },
): Promise<{ summary: string; usage: Usage; model: ModelEntry; source: PlannedSource } | null> {
  let { model, source } = fold;
  let overflows = 0;
  for (;;) {
    // The plan's cap: summaryMaxChars, and never more than the fold takes away from the replay.
    const maxChars = source.maxChars ?? source.settings.summaryMaxChars;
    const request = buildFoldRequest({
      model,
      previousSummary: source.summary,
      excerpts: source.plan.excerpts,
      maxChars,
    });
    try {
      // A timeout of its own: without one the SDK refuses a plain call whose max_tokens (a large
      // summary cap plus thinking room) could outlast ten minutes; a queue consumer has fifteen.
      // Well-formed as a turn's request is (agent/model-call.ts): an excerpt of stored text holding
      // half a pair would make the whole body invalid JSON to the API.
      const reply = await client.messages.create(
        wellFormedDeep(request) as unknown as Anthropic.MessageCreateParamsNonStreaming,
        {
          timeout: FOLD_CALL_TIMEOUT_MS,
        },
      );
      const text = reply.content
        .map((b) => (b.type === "text" ? b.text : ""))
        .join("")
        .trim();
      const usage = billedUsage(reply, model);
      // A refusal's words are no summary: the fallback model, when the settings name one, is asked
      // the same fold (never the refuser again); without one the old summary stays. A reply cut off
      // short of the cap would end mid-sentence (one at the cap is cut to it, at a sentence where it
      // can be): the old summary stays. A reply that ran out of context window is cut off as one out
      // of max_tokens is.
      if (reply.stop_reason === "refusal") {
        const instead = await fold.refusal.fallBack();
        if (!instead) throw new SpentCallError("the model refused to summarize", usage, model);
        await fold.refusal.refused({ usage, model });
        model = instead;
        continue;
      }
      const cutOff = reply.stop_reason === "max_tokens" || reply.stop_reason === "model_context_window_exceeded";
      if (cutOff && text.length < maxChars)
        throw new SpentCallError(`the summary was cut off at ${reply.stop_reason}`, usage, model);
      if (!text) throw new SpentCallError("the model returned an empty summary", usage, model);
      return { summary: capSummary(text, maxChars), usage, model, source };
    } catch (err) {
      const overflow =
        err instanceof Anthropic.APIError && err.status === 400 && /prompt is too long/i.test(err.message);
      if (!overflow || overflows >= OVERFLOW_RETRIES) throw err;
      overflows++;
      const next = await fold.refetch(shrinkFoldBudget(source.budgetChars, err.message));
      if (!next?.plan) return null;
      source = { ...next, plan: next.plan };
    }
  }
}
