// The automation queue's consumer: each message is one run, executed as a turn on the
// automation's channel. Each delivery is an attempt: a failed attempt records its error on the
// run and hands the message back to the queue, which retries it with backoff (max_retries in
// wrangler.toml) and then moves it to the dead-letter queue, whose consumer (below) records the
// run as failed. Failures are isolated per message.
import { envConfig } from "../../core/env-config";
import type { TurnEvent } from "../../core/events";
import { asLocationHint, withLocationHint } from "../../core/location-hint";
import { channelObjectName } from "../../durable-objects/channel-do";
import { rateLimitMessage, refundTurn, takeTenantTurn, UnstartedTurn } from "../../durable-objects/rate-limiter-client";
import {
  finishRun,
  holdsRun,
  markTurnKeySent,
  pastExpiry,
  recordDeadRun,
  recordFailedAttempt,
  startRun,
  unmarkTurnKeySent,
  type AutomationJob,
  type RunTurn,
} from "../../services/automations";
import type { TurnInput } from "../../durable-objects/conversation/conversation-do";
import { ApiError } from "./errors";
import { collectTurn, type TurnSummary } from "./turn-response";
import { startTurn, type StartedTurn } from "./turns";

export const AUTOMATION_DLQ = "context-chat-automations-dlq";
/** The refusal of a turn while another waits on client tools (turn-runner's TURN_PAUSED). */
const TURN_PAUSED = "turn_paused";

/**
 * The idempotency key of a run's `n`-th turn on its conversation. Each attempt tries the keys in
 * order: a key whose turn succeeded answers with that turn's outcome, one still running is
 * refused (the attempt is retried), one whose turn failed or that another prompt used is passed.
 */
export const runTurnKey = (runId: string, n: number): string => `automation-run:${runId}:${n}`;
/** Keys one attempt tries at most: far more than the queue's deliveries and prompt changes of one run. */
const MAX_TURN_KEYS = 20;
/**
 * A queue consumer invocation's wall-clock limit: an attempt still at work past it dies, mid-turn
 * perhaps. Each attempt keeps one deadline, this long after it starts less RECORD_MARGIN_MS.
 */
const CONSUMER_LIMIT_MS = 15 * 60_000;
/** Kept back from the limit for the attempt's last D1 writes and its answer to the queue. */
const RECORD_MARGIN_MS = 60_000;
/**
 * What an attempt must have left before its deadline to start a turn under a key it has not tried.
 * No timeout bounds a turn (its loop is bounded by model calls, not time), so a new turn gets no
 * less than a fresh delivery has after its setup: an attempt that spent longer (waiting for an
 * earlier attempt's turn that then failed) hands the run back to the queue instead, and the next
 * delivery starts the new key with the whole limit.
 */
const NEW_TURN_BUDGET_MS = CONSUMER_LIMIT_MS - RECORD_MARGIN_MS - 60_000;
/**
 * How long an attempt waits for a keyed turn an earlier attempt left running (its consumer died;
 * the conversation runs the turn on) before it fails and leaves the outcome to a later delivery:
 * inside the attempt's deadline, and longer than the queue's whole backoff. Not shorter: a wait
 * spends none of a new turn's budget (after a long one no new turn starts), while a short one
 * would spend the run's few deliveries on a long turn that then succeeds.
 */
const RUNNING_TURN_WAIT_MS = 10 * 60_000;

/**
 * Stop reasons of a turn that ended without an error but without the model's answer: its run is
 * recorded failed, the reason said. A reply cut short (max_tokens, context_full) is an answer.
 */
const UNANSWERED_STOPS = new Map([
  ["interrupted", "the turn was stopped before it finished (POST /v1/conversations/:id/stop, or a stop from a client)"],
  ["refusal", "the model declined to answer"],
  ["max_iterations", "the turn reached its maxToolIterations bound before the model answered"],
  ["client_tool_timeout", "the turn's wait for client tool results ran out before the model answered"],
]);

/** Backoff between attempts: the base (default 30 s) doubled per earlier attempt, at most 10 minutes. */
export function automationRetryDelay(env: Env, attempts: number): number {
  return Math.min(600, envConfig(env).AUTOMATION_RETRY_DELAY_SECONDS * 2 ** Math.max(0, attempts - 1));
}

const runIdOf = (message: Message<unknown>): string | null => {
  const job = message.body as Partial<AutomationJob>;
  return job?.kind === "automation" && typeof job.runId === "string" ? job.runId : null;
};

export async function runAutomationBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const runId = runIdOf(message);
      if (!runId) {
        console.error("dropping malformed automation job", message.id);
        message.ack();
        return;
      }
      let failure: string | null;
      try {
        failure = await runAutomation(env, runId, message.attempts);
      } catch (err) {
        // Infrastructure trouble (D1, the object): the attempt failed like any other; if even
        // recording that fails, the next delivery still takes the run over by its higher count.
        failure = err instanceof Error ? err.message : String(err);
        await recordFailedAttempt(env.DB, { runId, attempt: message.attempts, error: failure }).catch(() => {});
      }
      if (failure === null) message.ack();
      else {
        console.error("automation attempt failed; the queue retries it", runId, message.attempts, failure);
        message.retry({ delaySeconds: automationRetryDelay(env, message.attempts) });
      }
    }),
  );
}

/** The dead-letter queue: runs whose every attempt failed end recorded as failed. */
export async function recordDeadAutomations(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const runId = runIdOf(message);
    if (runId) await recordDeadRun(env.DB, runId);
    message.ack();
  }
}

/** Time as an attempt reads it and waits on it: the platform's, or a test's. */
export interface AttemptClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const platformClock: AttemptClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface AttemptOptions {
  runId: string;
  /** The delivery's count (message.attempts). */
  attempt: number;
  clock?: AttemptClock;
}

/** One attempt at a run, on the platform's clock (runAutomationAttempt). */
export function runAutomation(env: Env, runId: string, attempt: number): Promise<string | null> {
  return runAutomationAttempt(env, { runId, attempt });
}

/**
 * One attempt at a run. Returns null when nothing is left to do (done, skipped, or a duplicate
 * delivery), or the error of a failed attempt, already recorded on the run.
 */
export async function runAutomationAttempt(
  env: Env,
  { runId, attempt, clock = platformClock }: AttemptOptions,
): Promise<string | null> {
  // One clock reading for startRun's expiry and this one: read twice, a key expiring in between
  // would leave a run skipped for its expiry with the prompt startRun stored.
  const now = clock.now();
  const started = await startRun(env.DB, { runId, attempt, now });
  if (!started) return null; // finished, or held by this same delivery: a duplicate
  const { automation, run } = started;
  /** The highest turn key an attempt sent: keys up to it replay (or were passed), one past it starts a turn. */
  let sent = run.turnKeysSent;
  // Past its creator key's expiry (claimed while the key was active, delivered after it: a queue
  // backlog, a retry, a resend): the key's prompt runs no more, as a tick claims no slot past it.
  const expired = automation !== null && pastExpiry(automation, now);
  let expiry = `the automation's creator key expired (${automation?.expiresAt}) before this attempt`;
  // Paused, expired (or gone) before any attempt sent the run's turn: the slot did not run. Paused or
  // expired after one did, the run takes the outcome of the turns sent, as any redelivery does, but
  // starts none.
  if (!automation || ((automation.paused || expired) && sent === 0)) {
    const error = !automation ? "deleted" : automation.paused ? "paused" : `${expiry}; the run's prompt was not run`;
    await finishRun(env.DB, { runId, attempt, outcome: { status: "skipped", error } });
    return null;
  }
  const replayOnly = automation.paused || expired;
  // The prompt the run's first attempt sent (startRun stored it): every attempt sends it, so its
  // keys replay however the automation's prompt was edited since. A run from before it was stored
  // sends the automation's.
  const promptText = run.prompt ?? automation.prompt;
  // A run has no caller: objects it creates go near whoever created the automation.
  const hint = asLocationHint(automation.locationHint);
  const channel = env.CHANNEL.get(
    env.CHANNEL.idFromName(channelObjectName(automation.tenantId, automation.channel)),
    withLocationHint(hint),
  );
  const at = { tenantId: automation.tenantId, name: automation.channel, locationHint: hint };
  // The channel is resolved only when a key no attempt sent is about to start its turn, never for
  // keys that only replay (nor for a paused automation's run, which starts none): a replay neither
  // re-creates a channel deleted meanwhile nor rotates an idle one to a new, empty conversation.
  // The channel's clock moves only for a turn that started on its conversation (not one refused,
  // nor a replay), as for a message (startChannelTurn): the resolve holds the conversation
  // meanwhile, and the touch after each turn request moves the clock or lets the hold go.
  let resolvedAt = 0;
  /** The channel's conversation, once resolved: a key no attempt sent starts its turn there. */
  let conversationId: string | null = null;
  let hold: number | undefined;
  /** A conversation a turn request found deleted: a resolve after it rotates the channel off it. */
  let gone: string | null = null;
  /** Resolves the channel (again, after `gone`): the error when its settings refuse a conversation. */
  const resolveChannel = async (): Promise<string | null> => {
    resolvedAt = Date.now();
    const place = await channel.resolve({ ...at, now: resolvedAt, gone, mark: false });
    if ("refused" in place) return `channel #${automation.channel}: ${place.refused}`;
    conversationId = place.conversationId;
    hold = place.hold;
    return null;
  };
  /**
   * The conversation the keys from `firstKey` to `sent` went to: a key is known only there, so they
   * replay there, wherever the channel is now (it was deleted, rotated, or the automation's channel
   * changed). Keys below `firstKey` went to an earlier conversation and are not sent again. Null
   * while no key was sent. A run whose keys were sent before the conversation was kept takes the
   * channel's: resolved, or only read for a paused automation's run (it creates nothing).
   */
  let sentTo = run.turnKeysConversationId;
  if (sentTo === null && sent > 0) {
    if (replayOnly) sentTo = (await channel.get(automation.tenantId, automation.channel))?.conversationId ?? null;
    else {
      const refused = await resolveChannel();
      if (refused !== null) {
        await recordFailedAttempt(env.DB, { runId, attempt, error: refused });
        return refused;
      }
      sentTo = conversationId;
    }
  }
  const firstKey = Math.max(1, run.turnKeysFrom);
  /** `ran`: a turn started on the conversation (not refused, nor only replayed). The hold goes either way. */
  const touch = async (ran: boolean) => {
    const held = hold;
    hold = undefined;
    if (conversationId === null || (!ran && held === undefined)) return;
    const { tenantId, name } = at;
    await channel
      .touch({ tenantId, name, conversationId, now: resolvedAt, ran, hold: held })
      .catch((err: unknown) => console.error("channel: its activity was not marked", err));
  };
  /**
   * A tenant turn token this attempt took for a key's turn that has not started: a turn request
   * refused before a turn started (turn_paused, a refused key), or never made, gives it back, as a
   * key's refused turn does (docs/api-notes.md, "Rate limits"). An attempt waiting out a paused
   * conversation would otherwise spend one on every knock, and shut the tenant's own turns out.
   */
  let token = false;
  const giveBack = async () => {
    if (!token) return;
    token = false;
    // The attempt goes on whatever the limiter does: a refund lost only leaves the token spent.
    await refundTurn(env, { keyHash: null, tenantId: automation.tenantId }).catch((err: unknown) =>
      console.error("automation: its turn token was not given back", err),
    );
  };
  try {
    /**
     * Earlier attempts' turns that failed, passed over by their keys: the run's usage counts each
     * once, by its key, so one whose attempt died before recording it is added by this attempt's
     * record, and one recorded already is not added again.
     */
    const passed: RunTurn[] = [];
    /** The attempt failed; `ended`: the stop reason of its turn, and the turn (the run's usage adds it). */
    const failed = async (error: string, ended: { stopReason: string | null; turn?: RunTurn } | null = null) => {
      const at = sentTo ?? conversationId; // the keys' conversation, else the channel's when resolved
      await recordFailedAttempt(env.DB, { runId, attempt, error, conversationId: at, ...ended, passed });
      return error;
    };
    // The run's turns are keyed (runTurnKey): a redelivery after an attempt that died mid-turn takes
    // that turn's outcome instead of running the prompt again. A key whose turn failed (recorded, or
    // replayed here) is passed over: the retry is a new turn, under the next key.
    // One deadline for the whole attempt (the consumer's limit): waiting for an earlier attempt's
    // turn spends it, and a turn under a key not tried yet starts only with NEW_TURN_BUDGET_MS left.
    const startedAt = clock.now();
    const deadline = startedAt + CONSUMER_LIMIT_MS - RECORD_MARGIN_MS;
    const waitUntil = Math.min(startedAt + RUNNING_TURN_WAIT_MS, deadline);
    const outOfTime = () =>
      failed(
        "no time was left in the attempt, after waiting for an earlier attempt's turn that failed, to run the retry's turn within the consumer's limit; the next attempt runs it",
      );
    // Another delivery may take the run, or the cron tick close it, while this attempt waits: past a
    // wait, and before each further key, the attempt makes sure it still holds the run, and a stale
    // attempt stops quietly (it neither starts a turn nor takes one's outcome).
    const holds = () => holdsRun(env.DB, { runId, attempt });
    let turn: TurnSummary | null = null;
    let turnKey = 0; // the n of turn's key
    let turnOn = ""; // the conversation turn ran on
    let pause = 500;
    let waited = false;
    // A turn waiting on client tools holds the channel's conversation, which refuses turns meanwhile
    // (turn_paused): at its door, or as the error of a turn queued behind it. That turn is not this
    // run's: most often another slot's of the same automation, queued ahead, whose attempt stops it
    // within moments, so the attempt waits and tries again; while a new turn still has its budget.
    // A person's turn may wait until its timeout: the attempt then fails saying so, and is retried.
    const waitOutPause = async (refusal: string): Promise<string | null> => {
      if (deadline - (clock.now() + pause) < NEW_TURN_BUDGET_MS)
        return failed(
          `the channel's conversation is waiting on client tool results for a turn that is not this run's (${refusal}); this run's prompt did not run, and the next attempt tries again`,
        );
      await clock.sleep(pause);
      pause = Math.min(pause * 2, 5_000);
      waited = true;
      return null;
    };
    // Every earlier turn of the run failed and the automation is paused (or expired): no retry runs.
    const endPaused = async () => {
      const error = automation.paused
        ? "the automation was paused after an earlier attempt's turn for this slot failed; the retry was not run"
        : `${expiry}, after an earlier attempt's turn for this slot failed; the retry was not run`;
      await finishRun(env.DB, {
        runId,
        attempt,
        passed,
        outcome: { status: "failed", conversationId: sentTo, error },
      });
      return null;
    };
    /**
     * A turn request on the conversation of the keys sent (a new key's is the channel's), touching
     * the channel after it as its answer says: its clock moves only for a turn started on it.
     */
    const startOn = async (to: string, prompt: TurnInput): Promise<StartedTurn> => {
      const ref = { tenantId: automation.tenantId, conversationId: to };
      const answer = await startTurn(env, ref, prompt).catch(async (err: unknown) => {
        await touch(false);
        throw err;
      });
      await touch(answer.kind === "started" && !answer.replayed && to === conversationId);
      return answer;
    };
    /**
     * Marks key `n` sent to the channel's conversation, the next to try. On a conversation other
     * than the earlier keys' (the channel moved), `n` is the first key sent there, and the failed
     * turns passed over so far are counted now: no later attempt replays their keys. Answers that
     * conversation, or null when the attempt no longer holds the run.
     */
    const mark = async (n: number): Promise<string | null> => {
      if (conversationId === null) throw new Error("a key is marked sent only once the channel is resolved");
      const moved = sentTo !== null && sentTo !== conversationId;
      if (!(await markTurnKeySent(env.DB, { runId, attempt, n, conversationId, moved, passed }))) return null;
      sent = n;
      sentTo = conversationId;
      return conversationId;
    };
    let polling = false; // the key tried again is one whose turn was still running
    for (let n = firstKey; turn === null; n++) {
      if ((waited || n > firstKey) && !(await holds())) return null;
      const mayStartTurn = () => deadline - clock.now() >= NEW_TURN_BUDGET_MS;
      if (!polling && !mayStartTurn()) return outOfTime();
      polling = false;
      // A key up to `sent` goes to the conversation it was sent to, where it replays; one past it is a
      // new turn on the channel's conversation, whichever that is now.
      const fresh = n > sent;
      if (fresh) {
        if (replayOnly) return endPaused();
        // The key may expire while the attempt waits (out a paused turn on the channel, or for an
        // earlier attempt's turn): no turn starts after it, as none starts for a later delivery.
        if (pastExpiry(automation, clock.now())) {
          expiry = `the automation's creator key expired (${automation.expiresAt}) while this attempt waited to start its turn`;
          if (sent > 0 || passed.length > 0) return endPaused();
          const error = `${expiry}; the run's prompt was not run`;
          await finishRun(env.DB, { runId, attempt, outcome: { status: "skipped", error } });
          return null;
        }
        // The first key to start a turn resolves the channel: no conversation can be started there
        // (its settings refuse one), the attempt fails, named.
        if (conversationId === null) {
          const refused = await resolveChannel();
          if (refused !== null) return failed(refused);
        }
        // A key no attempt sent starts a turn: it takes one of the tenant's turn tokens, as every
        // key's turn does (an automation has no key of its own). Refused, the attempt fails and the
        // queue retries it after its backoff; a key that only replays takes none.
        const decision = await takeTenantTurn(env, automation.tenantId);
        if (!decision.ok)
          return failed(
            `${rateLimitMessage(decision)}; this run's prompt did not run, and the next attempt tries again`,
          );
        token = true;
        if ((await mark(n)) === null) return null;
      }
      const prompt = {
        content: [{ type: "text" as const, text: promptText }],
        idempotencyKey: runTurnKey(runId, n),
      };
      // The conversation of the keys sent: none only for a paused automation's run of keys sent before
      // their conversation was kept, on a channel that has none now (nothing to replay).
      const to = sentTo;
      if (to === null) return endPaused();
      let on = to;
      let turnStart: StartedTurn;
      try {
        turnStart = await startOn(to, prompt);
        if (turnStart.kind === "missing") {
          // The conversation of the turns sent is gone, their outcomes with it: a paused
          // automation's run starts none elsewhere.
          if (replayOnly) return endPaused();
          // A resolve from now on rotates the channel off it, should the channel still name it.
          gone = to;
          if (to === conversationId) {
            // The channel's conversation was deleted: the channel rotates and the run goes on there.
            if (!mayStartTurn()) return outOfTime();
            const refused = await resolveChannel();
            if (refused !== null) return failed(refused);
          }
          // A key sent before (by an earlier attempt, or earlier in this one) is unknown to the
          // channel's conversation, where it would start a turn that took no tenant turn token: the
          // run goes on with a new key, which takes one.
          if (!fresh) {
            n = sent;
            continue;
          }
          // The key this attempt just took a token for reached no conversation: it goes to the new one.
          const marked = await mark(n);
          if (marked === null) return null;
          on = marked;
          turnStart = await startOn(on, prompt);
        }
      } catch (err) {
        // The conversation refused the request (an ApiError; turnEvents): no turn started under the
        // key. Anything else may have come after a turn started: its token stays spent.
        if (err instanceof ApiError) await giveBack();
        else token = false;
        // The prompt was changed since that key's turn: the next key is this prompt's.
        if (err instanceof ApiError && err.type === "idempotency_key_reused" && n < MAX_TURN_KEYS) continue;
        if (err instanceof ApiError && err.type === "idempotency_in_progress") {
          // An earlier attempt's turn still runs: its outcome is this attempt's, once it ends.
          if (clock.now() + pause > waitUntil)
            return failed("the turn an earlier attempt started is still running; the next attempt takes its outcome");
          await clock.sleep(pause);
          pause = Math.min(pause * 2, 5_000);
          waited = true;
          polling = true;
          n--;
          continue;
        }
        if (err instanceof ApiError && err.type === TURN_PAUSED) {
          // Refused before any turn existed under the key: it is not sent (a paused automation's
          // retry would otherwise send it as one to replay, and start its turn).
          if (sent === n) await unmarkTurnKeySent(env.DB, { runId, attempt, n });
          sent = Math.min(sent, n - 1);
          const gaveUp = await waitOutPause(err.message);
          if (gaveUp !== null) return gaveUp;
          n--; // a refused key was freed: tried again
          continue;
        }
        return failed(err instanceof Error ? err.message : String(err));
      }
      if (turnStart.kind === "missing") return failed("the channel's conversation is gone");
      const unrun = new UnstartedTurn();
      const seen = new TransformStream<TurnEvent, TurnEvent>({
        transform(event, out) {
          unrun.see(event);
          out.enqueue(event);
        },
      });
      const collected = await collectTurn(turnStart.events.pipeThrough(seen));
      // A turn that stopped before its model loop with nothing saved and nothing spent (one queued
      // behind a turn that then paused, refused as it came up) gives its token back; as does a
      // replay, which started no turn. A turn that ran keeps it.
      if (turnStart.replayed || unrun.unstarted) await giveBack();
      else token = false;
      // An earlier attempt's turn that failed: this attempt is the retry, a new turn. Its usage goes
      // with this attempt's record, counted unless its attempt recorded it before dying.
      if (turnStart.replayed && collected.error && n < MAX_TURN_KEYS) {
        passed.push({ key: n, usage: collected.usage });
        continue;
      }
      // Queued behind a turn that then paused: that key's turn failed unrun, the next key's is new.
      if (collected.error?.type === TURN_PAUSED) {
        const gaveUp = await waitOutPause(collected.error.message);
        if (gaveUp !== null) return gaveUp;
        if (n < MAX_TURN_KEYS) continue;
      }
      turn = collected;
      turnKey = n;
      turnOn = on;
    }
    // An automation has no client to answer a client tool. The paused turn is stopped at once (it
    // would hold the channel's conversation, refusing every post, until its timeout), whether or not
    // this attempt still holds the run: an automation deleted mid-run (which took its run) or a run
    // taken over or closed meanwhile leaves nobody else to stop it, and a stop that another holder
    // also makes changes nothing.
    const stop = turn.requiresAction
      ? await stopPausedTurn(env, {
          ref: { tenantId: automation.tenantId, conversationId: turnOn },
          turnId: turn.requiresAction.turnId,
        })
      : null;
    // The outcome is the holder's to record: the run may have been taken or closed during the turn.
    if (!(await holds())) return null;
    const own: RunTurn = { key: turnKey, usage: turn.usage };
    if (turn.error)
      return failed(`${turn.error.type}: ${turn.error.message}`, { stopReason: turn.stop_reason, turn: own });
    const finished = { conversationId: turnOn, turn: own, stopReason: turn.stop_reason };
    if (turn.requiresAction && stop) {
      const error = `the turn called client tools (${turn.requiresAction.calls.map((c) => c.name).join(", ")}) that no client of an automation answers; ${stop.note}`;
      // A stop that failed left the turn waiting, holding the channel's conversation: the attempt
      // fails and the queue retries it, and the retry's turn key replays the paused turn, which it
      // stops again. Once stopped (or gone with its conversation) the run fails for good: an
      // attempt again would only pause again. The turn's usage is recorded now, by its key: the
      // attempt that takes its outcome again (the replay) does not add it twice, and a run no
      // attempt manages to stop still counts it.
      if (!stop.ended) return failed(error, { stopReason: turn.stop_reason, turn: own });
      await finishRun(env.DB, { runId, attempt, passed, outcome: { status: "failed", ...finished, error } });
      return null;
    }
    // A turn that ended without the model's answer and without an error (stopped by a user, refused
    // by the model) is no success; not retried either: a stop was meant, and a refusal would recur.
    const unanswered = UNANSWERED_STOPS.get(turn.stop_reason);
    if (unanswered) {
      const error = `the turn ended with stop_reason "${turn.stop_reason}": ${unanswered}`;
      await finishRun(env.DB, { runId, attempt, passed, outcome: { status: "failed", ...finished, error } });
      return null;
    }
    await finishRun(env.DB, { runId, attempt, passed, outcome: { status: "succeeded", ...finished } });
    return null;
  } finally {
    // An attempt that ends before it asks for a turn, or fails in between, lets its hold go, and
    // gives back a token it took for a turn that did not start.
    await touch(false);
    await giveBack();
  }
}

/**
 * Stops a run's turn paused on client tools, saying truly how that went: `ended` only when the
 * conversation answered that the turn was stopped, or the conversation is gone with it.
 */
async function stopPausedTurn(
  env: Env,
  { ref, turnId }: { ref: { tenantId: string; conversationId: string }; turnId: string },
): Promise<{ ended: boolean; note: string }> {
  try {
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(ref.conversationId));
    const answer = await stub.stopTurn(ref, turnId);
    if (answer === null) return { ended: true, note: "its conversation was deleted before it could be stopped" };
    if (answer.stopped) return { ended: true, note: "it was stopped" };
    // Not stopped by this call: either the turn no longer waits (it timed out, or a stop the object
    // forgot in a restart ended it), and nothing holds the channel, or its stop failed to save.
    const waits = waitingTurn(await stub.getMeta(ref)) === turnId;
    if (!waits) return { ended: true, note: "it had already ended" };
    return { ended: false, note: "stopping it failed: the conversation answered that the turn was not stopped" };
  } catch (err) {
    console.error("stopping an automation's paused turn failed", err);
    return { ended: false, note: `stopping it failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The turn a conversation's view says waits on client tools (`requiresAction`, getMeta), if any. */
function waitingTurn(view: object | null): string | undefined {
  const pending = view && "requiresAction" in view ? view.requiresAction : undefined;
  return pending && typeof pending === "object" && "turnId" in pending && typeof pending.turnId === "string"
    ? pending.turnId
    : undefined;
}
