// Automations: a cron schedule, a prompt and a channel. The cron trigger claims each due
// (automation, slot) pair once — the unique key of automation_runs — and fans the runs out
// through a queue; the consumer runs each as a turn on its channel and records the outcome of
// every attempt, the queue retrying failed ones and dead-lettering those that never succeed.
import { and, count, desc, eq, exists, gte, gt, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { alias } from "drizzle-orm/sqlite-core";
import { apiKeys, automationRuns, automations, tenants } from "../db/schema";
import { keyActiveAt } from "./keys/api-keys";
import { sessionDatabase } from "./d1-session-database";
import { type CronSchedule, dueSlot, dueSlots, nextCheck, nextSlot, parseCron, sameSchedule } from "../core/cron";
import { envConfig, ENV_VARS } from "../core/env-config";
import { sortableId } from "../core/ids";
import { addUsage, zeroUsage, type Usage } from "../core/types";

export type Automation = typeof automations.$inferSelect;
export type AutomationRunRow = typeof automationRuns.$inferSelect;

/** A slot may run up to this late: covers trigger delays, and a new automation's current hour. */
export const SLOT_LOOKBACK_MINUTES = 60;
/**
 * A run never finished when it is still open this long after its claim with no attempt started
 * (its queue message was lost), or this long after its latest attempt started: an attempt ends
 * within the consumer's 15-minute wall-clock limit and the next delivery comes within the 10-minute
 * backoff, so a later attempt would have started by then. It is closed as failed.
 */
export const RUN_TIMEOUT_MS = 30 * 60_000;
/**
 * A tenant's automations, paused ones included. Each runs turns no key's rate limit counts (only
 * the tenant's turn limit does, automation-runner), on the platform's cron: the cap bounds what
 * one tenant can schedule.
 */
export const MAX_AUTOMATIONS = 200;
/** Due automations one invocation claims: each costs two statements (the claim, the next slot). */
export const CLAIM_PAGE = ENV_VARS.AUTOMATION_CLAIM_PAGE.default;
/**
 * next_run_at of a row that will never be due (a schedule that no longer parses). A schedule whose
 * next slot is beyond one search's horizon is due at the horizon's end instead (nextCheck): that
 * claim runs nothing and searches on from there.
 */
const NEVER = "9999-12-31T23:59:59.999Z";
/** A run in one of these states may still be taken by a delivery, or closed as failed. */
const OPEN = ["queued", "running", "retrying"];

export interface AutomationJob {
  kind: "automation";
  runId: string;
}

/** More automations were due than one invocation claims: the consumer claims the next page for the same tick. */
export interface ClaimContinuation {
  kind: "claim";
  scheduledTime: number;
}

/**
 * The expiry of the key making a request (`expiresAt` null: it never expires, or no key made it):
 * an automation it creates, or whose prompt or schedule it changes, runs no slot past it, as a key
 * never makes one that outlives it. Read at the primary (the key's own lookup was): a replica that
 * has not seen a key made a moment ago has no row, and a missing row must never read as "never
 * expires". Null when the key is not the tenant's active key there (gone, revoked or expired): a
 * key revoked in another data center is still accepted here from the auth cache for up to
 * AUTH_CACHE_MS, and must not leave an automation behind that outlives its revocation. A
 * revocation after the write is not followed: rotating a lasting key keeps its automations running.
 */
export async function creatorExpiry(
  db: D1Database,
  { tenantId, keyId, now = new Date() }: { tenantId: string; keyId: string | undefined; now?: Date },
): Promise<{ expiresAt: string | null } | null> {
  if (!keyId) return { expiresAt: null };
  const primary = sessionDatabase(db, db.withSession("first-primary"));
  const row = await drizzle(primary)
    .select({ e: apiKeys.expiresAt })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.tenantId, tenantId), keyActiveAt(apiKeys, now.toISOString())))
    .get();
  return row ? { expiresAt: row.e } : null;
}

/** The key making the change, as its own table reference inside the statement that writes. */
const caller = alias(apiKeys, "caller_key");

/**
 * A write's condition that the key making it is still the tenant's active key at `nowIso`, read
 * in the writing statement (at the primary): a key revoked between creatorExpiry's read and the
 * write writes nothing.
 */
const callerActive = (
  db: D1Database,
  { tenantId, keyId, nowIso }: { tenantId: string; keyId: string; nowIso: string },
) =>
  exists(
    drizzle(db)
      .select({ id: caller.id })
      .from(caller)
      .where(and(eq(caller.id, keyId), eq(caller.tenantId, tenantId), keyActiveAt(caller, nowIso))),
  );

/** Whether a write refused over `keyId` was: that key is no longer active, read at the primary. */
const creatorGone = async (db: D1Database, { tenantId, keyId }: { tenantId: string; keyId: string }) =>
  (await creatorExpiry(db, { tenantId, keyId })) === null;

/**
 * A new automation, or "limit" when the tenant has MAX_AUTOMATIONS already, or "creator_gone" when
 * `creatorId` (the key creating it; none for a write no key makes) is no longer active.
 */
export async function createAutomation(
  db: D1Database,
  {
    tenantId,
    input,
    locationHint = null,
    expiresAt = null,
    creatorId,
  }: {
    tenantId: string;
    input: { name: string; schedule: string; prompt: string; channel: string; paused?: boolean };
    locationHint?: string | null;
    /** The creating key's expiry (creatorExpiry). */
    expiresAt?: string | null;
    creatorId?: string;
  },
): Promise<Automation | "limit" | "creator_gone"> {
  const now = new Date().toISOString();
  const row: Automation = {
    id: sortableId("auto"),
    tenantId,
    name: input.name,
    schedule: input.schedule,
    prompt: input.prompt,
    channel: input.channel,
    paused: input.paused ?? false,
    createdAt: now,
    updatedAt: now,
    nextRunAt: "",
    locationHint,
    expiresAt,
  };
  // INSERT … SELECT from the tenant's own row, so the cap is checked in the inserting statement
  // and concurrent creates cannot pass it together.
  const d = drizzle(db);
  const inserted = await d.insert(automations).select((qb) =>
    qb
      .select({
        id: sql<string>`${row.id}`.as("id"),
        tenantId: tenants.id,
        name: sql<string>`${row.name}`.as("name"),
        schedule: sql<string>`${row.schedule}`.as("schedule"),
        prompt: sql<string>`${row.prompt}`.as("prompt"),
        channel: sql<string>`${row.channel}`.as("channel"),
        paused: sql<boolean>`${row.paused ? 1 : 0}`.as("paused"),
        createdAt: sql<string>`${row.createdAt}`.as("created_at"),
        updatedAt: sql<string>`${row.updatedAt}`.as("updated_at"),
        nextRunAt: sql<string>`${row.nextRunAt}`.as("next_run_at"),
        locationHint: sql<string | null>`${row.locationHint}`.as("location_hint"),
        expiresAt: sql<string | null>`${row.expiresAt}`.as("expires_at"),
      })
      .from(tenants)
      .where(
        and(
          eq(tenants.id, tenantId),
          lt(d.select({ n: count() }).from(automations).where(eq(automations.tenantId, tenantId)), MAX_AUTOMATIONS),
          creatorId ? callerActive(db, { tenantId, keyId: creatorId, nowIso: now }) : undefined,
        ),
      ),
  );
  if (inserted.meta.changes) return row;
  // A key once revoked or expired stays so: read after the refusal, its state is the one the insert saw.
  return creatorId && (await creatorGone(db, { tenantId, keyId: creatorId })) ? "creator_gone" : "limit";
}

export async function getAutomation(db: D1Database, tenantId: string, id: string): Promise<Automation | null> {
  return (
    (await drizzle(db)
      .select()
      .from(automations)
      .where(and(eq(automations.tenantId, tenantId), eq(automations.id, id)))
      .get()) ?? null
  );
}

export async function listAutomations(
  db: D1Database,
  { tenantId, limit, before }: { tenantId: string; limit: number; before?: string },
): Promise<Automation[]> {
  const where = before
    ? and(eq(automations.tenantId, tenantId), lt(automations.id, before))
    : eq(automations.tenantId, tenantId);
  return drizzle(db).select().from(automations).where(where).orderBy(desc(automations.id)).limit(limit);
}

/** Reads and writes of a resume or reschedule before one finds the row as it read it (else "changed"). */
const UPDATE_ATTEMPTS = 3;

export async function updateAutomation(
  db: D1Database,
  {
    tenantId,
    id,
    change,
    keyExpiry,
  }: {
    tenantId: string;
    id: string;
    change: Partial<Pick<Automation, "name" | "schedule" | "prompt" | "channel" | "paused">>;
    /**
     * The expiry of the key making the change (creatorExpiry), when it is one: written as the
     * automation's expiresAt only when the change really alters its prompt or schedule (one sent
     * again, the schedule in any spelling of the same slots, leaves the expiry as it was). With
     * `keyId` (that key), such a write lands only while the key is active: "creator_gone" otherwise.
     */
    keyExpiry?: { expiresAt: string | null; keyId?: string };
  },
): Promise<Automation | null | "changed" | "creator_gone"> {
  // A new schedule, or a resumed automation, runs from its next slot after the change: a slot that
  // passed before it (or while paused) is not caught up. Only a new automation's first hour is.
  // The same schedule again (in any spelling of the same slots: sameSchedule), or a resume of one
  // not paused, leaves a due slot due. Such a schedule is not written either: the stored spelling
  // stays, so a tick that read the row still claims it (its claim checks the schedule it read).
  const byId = and(eq(automations.tenantId, tenantId), eq(automations.id, id));
  const write = (
    set: typeof change & { expiresAt?: string | null },
    extra: { nextRunAt?: string; asRead?: Automation; callerId?: string },
  ) => {
    const nowIso = new Date().toISOString();
    return drizzle(db)
      .update(automations)
      .set({
        ...set,
        updatedAt: nowIso,
        ...(extra.nextRunAt !== undefined ? { nextRunAt: extra.nextRunAt } : {}),
      })
      .where(
        extra.asRead
          ? and(
              byId,
              eq(automations.updatedAt, extra.asRead.updatedAt),
              eq(automations.paused, extra.asRead.paused),
              eq(automations.schedule, extra.asRead.schedule),
              eq(automations.prompt, extra.asRead.prompt),
              extra.callerId ? callerActive(db, { tenantId, keyId: extra.callerId, nowIso }) : undefined,
            )
          : byId,
      )
      .returning();
  };
  const remakes = keyExpiry !== undefined && (change.prompt !== undefined || change.schedule !== undefined);
  if (change.schedule === undefined && change.paused !== false && !remakes) return (await write(change, {}))[0] ?? null;
  // What decides is the row as the primary holds it: the request's session may read a replica
  // that has not seen a pause, a reschedule or a new prompt (a client's bookmark starts it
  // anywhere). The write lands only while the row is still as read (a pause, reschedule or
  // prompt change between them decides again).
  const primary = sessionDatabase(db, db.withSession("first-primary"));
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
    const current = await getAutomation(primary, tenantId, id);
    if (!current) return null;
    let set: Parameters<typeof write>[0] = change;
    let schedule = current.schedule;
    if (change.schedule !== undefined) {
      const { schedule: sent, ...rest } = change;
      if (sameSchedule(sent, current.schedule)) set = rest;
      else schedule = sent;
    }
    // The prompt or schedule is now the changing key's: the automation runs until its expiry.
    const promptChanged = change.prompt !== undefined && change.prompt !== current.prompt;
    const remade = keyExpiry && (promptChanged || schedule !== current.schedule);
    if (remade) set = { ...set, expiresAt: keyExpiry.expiresAt };
    // The automation becomes the changing key's only while that key is active (read in the write).
    const callerId = remade ? keyExpiry.keyId : undefined;
    const nextRunAt =
      schedule !== current.schedule || (current.paused && change.paused === false)
        ? firstSlotAfter(schedule, Date.now())
        : undefined;
    const rows = await write(set, { nextRunAt, asRead: current, callerId });
    if (rows[0]) return rows[0];
    if (callerId && (await creatorGone(db, { tenantId, keyId: callerId }))) return "creator_gone";
  }
  return "changed";
}

/**
 * A schedule's first slot after `now`, as next_run_at holds it: the end of the search when the
 * slot is further away than it looks, NEVER when the schedule no longer parses.
 */
function firstSlotAfter(schedule: string, now: number): string {
  try {
    return nextCheck(parseCron(schedule), now).toISOString();
  } catch {
    return NEVER;
  }
}

/**
 * Deletes the automation and its recorded runs in one batch: no route lists the runs of an
 * automation that is gone. A delivery of one of its runs still in the queue finds no run to start.
 */
export async function deleteAutomation(db: D1Database, tenantId: string, id: string): Promise<boolean> {
  const d = drizzle(db);
  const [rows] = await d.batch([
    d
      .delete(automations)
      .where(and(eq(automations.tenantId, tenantId), eq(automations.id, id)))
      .returning({ id: automations.id }),
    d.delete(automationRuns).where(and(eq(automationRuns.tenantId, tenantId), eq(automationRuns.automationId, id))),
  ]);
  return rows.length > 0;
}

/** Newest first; `before` is the last run id of the previous page. */
export async function listRuns(
  db: D1Database,
  { tenantId, automationId, limit, before }: { tenantId: string; automationId: string; limit: number; before?: string },
): Promise<AutomationRunRow[]> {
  return drizzle(db)
    .select()
    .from(automationRuns)
    .where(
      and(
        eq(automationRuns.tenantId, tenantId),
        eq(automationRuns.automationId, automationId),
        before ? lt(automationRuns.id, before) : undefined,
      ),
    )
    .orderBy(desc(automationRuns.id))
    .limit(limit);
}

/** A claimed run not started this long after its claim may never have been sent: it is sent again. */
export const UNSENT_AFTER_MS = 5 * 60_000;
/** Unsent runs one read returns (one statement); sendRuns sends them 100 to a batch. */
const UNSENT_PAGE = 1_000;
/**
 * Unsent runs one tick sends again at most: about 10 reads and 100 queue batches, far inside an
 * invocation's D1 queries and subrequests, which the tick's other sweeps share. Past it the rest
 * wait for the next tick (resendUnsentRuns logs that some were left).
 */
export const RESEND_TICK_RUNS = 10_000;

/** A run claimed but never started; the last of a read is where the next read goes on from. */
export interface UnsentRun {
  runId: string;
  queuedAt: string;
}

/**
 * Runs claimed but never started, UNSENT_AFTER_MS to RUN_TIMEOUT_MS old: their queue
 * message may have been lost (a send that failed after the claim, an invocation that died between
 * them), and a cron tick is not retried. Sending one again is harmless: a delivery starts a run
 * only once per attempt number (startRun). Newest claim first, read on from `after` (the last run
 * of the previous read): a run's claim time never changes, so no run comes back in a later read
 * of the same tick however many start meanwhile.
 */
export async function unsentRuns(
  db: D1Database,
  now: number,
  { after, limit = UNSENT_PAGE }: { after?: UnsentRun; limit?: number } = {},
): Promise<UnsentRun[]> {
  return drizzle(db)
    .select({ runId: automationRuns.id, queuedAt: automationRuns.queuedAt })
    .from(automationRuns)
    .where(
      and(
        eq(automationRuns.status, "queued"),
        eq(automationRuns.attempts, 0),
        // At most, not under: the trigger ticks every 5 minutes, so the tick right after a claim
        // is exactly UNSENT_AFTER_MS later and must send the lost run again, not the one after it.
        lte(automationRuns.queuedAt, new Date(now - UNSENT_AFTER_MS).toISOString()),
        gte(automationRuns.queuedAt, new Date(now - RUN_TIMEOUT_MS).toISOString()),
        after
          ? or(
              lt(automationRuns.queuedAt, after.queuedAt),
              and(eq(automationRuns.queuedAt, after.queuedAt), lt(automationRuns.id, after.runId)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(automationRuns.queuedAt), desc(automationRuns.id))
    .limit(limit);
}

/**
 * One tick's resend: every unsent run (unsentRuns) sent again once, a read at a time, each read
 * going on after the last run sent, so however many are unsent none waits behind the same first
 * page tick after tick, and none is sent twice in one tick. At most `max` (RESEND_TICK_RUNS) a
 * tick, the newest claims first: past the bound the latest claims, not yet sent again, go before
 * the oldest (sent again by earlier ticks already), which would otherwise take every tick's share.
 * `more`: some were left for the next tick.
 */
export async function resendUnsentRuns(
  env: Env,
  now: number,
  { page = UNSENT_PAGE, max = RESEND_TICK_RUNS }: { page?: number; max?: number } = {},
): Promise<{ resent: number; more: boolean }> {
  let resent = 0;
  let after: UnsentRun | undefined;
  let more = false;
  while (resent < max) {
    const limit = Math.min(page, max - resent);
    const runs = await unsentRuns(env.DB, now, { after, limit });
    await sendRuns(
      env,
      runs.map(({ runId }) => ({ kind: "automation" as const, runId })),
    );
    resent += runs.length;
    after = runs.at(-1);
    if (runs.length < limit) break;
    if (resent === max) more = (await unsentRuns(env.DB, now, { after, limit: 1 })).length > 0;
  }
  if (resent > 0)
    console.log(JSON.stringify({ event: "automation_resends", tick: new Date(now).toISOString(), resent, more }));
  return { resent, more };
}

/** One message per run on the automation queue, 100 to a batch (the queue's limit). */
export async function sendRuns(env: Env, jobs: readonly AutomationJob[]): Promise<void> {
  const runs = env.AUTOMATION_QUEUE as Queue<AutomationJob>;
  for (let i = 0; i < jobs.length; i += 100) await runs.sendBatch(jobs.slice(i, i + 100).map((body) => ({ body })));
}

/**
 * Runs still open RUN_TIMEOUT_MS after their latest attempt started, or after their claim when no
 * attempt started, never finished (a lost message, a dead consumer): closed as failed. A slow run
 * claimed long ago but started lately is left to finish.
 */
export async function closeAbandonedRuns(db: D1Database, now: number): Promise<number> {
  const closed = await drizzle(db)
    .update(automationRuns)
    .set({
      status: "failed",
      error: sql`COALESCE(${automationRuns.error}, 'the run did not finish')`,
      finishedAt: new Date(now).toISOString(),
    })
    .where(
      and(
        inArray(automationRuns.status, OPEN),
        lt(
          sql`COALESCE(${automationRuns.startedAt}, ${automationRuns.queuedAt})`,
          new Date(now - RUN_TIMEOUT_MS).toISOString(),
        ),
      ),
    );
  return closed.meta.changes ?? 0;
}

/**
 * Slots one tick claims per automation at most. The trigger fires every 5 minutes, so an every-minute
 * schedule owes 5 slots to a tick on time and 15 to one that follows two missed ticks. When more
 * are owed (the trigger stalled for longer), the latest MAX_SLOTS_PER_TICK are claimed and the
 * older ones recorded `skipped` (SLOTS_PAST_BOUND): an automation that fell behind catches up at
 * once instead of running its slots ever later, and the run history shows what it missed.
 */
export const MAX_SLOTS_PER_TICK = 15;
const SLOTS_PAST_BOUND = `more slots were due at once than a tick claims for one automation (${MAX_SLOTS_PER_TICK}, the latest of them); this one was not run`;
/**
 * Slots older than the lookback (the trigger stalled for over an hour) one tick records `skipped`
 * per automation at most, the earliest of them: every slot since the last claim is accounted for
 * in the run history up to this bound, and the last one recorded says when the unrecorded ones end.
 * Found slot by slot (nextSlot), so a tick's work for a row stays bounded however long the stall.
 */
export const MAX_STALLED_SLOTS = 100;
const STALLED = `the trigger did not run for over an hour after this slot (a slot is run at most ${SLOT_LOOKBACK_MINUTES} minutes late); this one was not run`;

/**
 * One page of a tick: the due automations (next_run_at at or before the tick, through the
 * automations_due index, at most `limit`), each one's due slots claimed at most once (the unique key
 * of automation_runs, whatever the number of ticks) and its next_run_at moved past the tick. The
 * slots due are every one from next_run_at to the tick (within SLOT_LOOKBACK_MINUTES, at most
 * MAX_SLOTS_PER_TICK run, older ones recorded skipped), so a schedule whose slots come faster than
 * the trigger loses none; those before the lookback (a trigger stalled for over an hour) are
 * recorded skipped too, up to MAX_STALLED_SLOTS. A new row (next_run_at '') has its latest slot in
 * the lookback claimed.
 * Work per call is bounded by `limit` however many automations exist; `more` says a full page was
 * read, so another call for the same tick may find more (the caller continues through the queue);
 * the claimed runs come back as `jobs` for the caller to send.
 */
export interface ClaimWork {
  /** Runs claimed (queued) by this page. */
  claimed: number;
  more: boolean;
  /** Automation rows the page query read (through the index: the due rows it returned). */
  rowsRead: number;
  /** D1 statements: the page query, one claim per row with a due slot, one next slot per row. */
  statements: number;
  /** One queue message per run this page claimed, for the caller to send. */
  jobs: AutomationJob[];
}

/** One slot of a claim: its run's id, and whether it runs or is recorded skipped. */
interface PlannedSlot {
  id: string;
  slot: string;
  status: "queued" | "skipped";
  error: string | null;
  finishedAt: string | null;
}

/** The slots a tick at `now` owes the row, oldest first, and where its next_run_at goes. */
function planClaim(row: { schedule: string; nextRunAt: string }, now: number): { slots: PlannedSlot[]; next: string } {
  let schedule: CronSchedule;
  try {
    schedule = parseCron(row.schedule);
  } catch {
    return { slots: [], next: NEVER }; // validated on write; a bad row must not stop the others
  }
  const latest = dueSlot(schedule, now, SLOT_LOOKBACK_MINUTES);
  const due =
    row.nextRunAt === ""
      ? latest
        ? [latest]
        : []
      : dueSlots(schedule, { from: Date.parse(row.nextRunAt), now, lookbackMinutes: SLOT_LOOKBACK_MINUTES });
  const skip = Math.max(0, due.length - MAX_SLOTS_PER_TICK);
  const nowIso = new Date(now).toISOString();
  const skipped = (at: Date, error: string): PlannedSlot => ({
    id: sortableId("run"),
    slot: at.toISOString(),
    status: "skipped",
    error,
    finishedAt: nowIso,
  });
  // Slots from next_run_at to the start of the lookback are too late to run, but were owed all the
  // same: without a row each, the history would not show them, and next_run_at moves past them.
  // Their ids are minted before the lookback's: the runs list newest first by id, so ids must
  // follow the slots' order.
  const before = Math.floor(now / 60_000) * 60_000 - SLOT_LOOKBACK_MINUTES * 60_000;
  const stalled = row.nextRunAt === "" ? null : stalledSlots(schedule, { from: Date.parse(row.nextRunAt), before });
  const older = (stalled?.slots ?? []).map((at) => skipped(at, STALLED));
  const last = older.at(-1);
  if (last && stalled?.more)
    last.error = `${STALLED}; the later slots up to ${new Date(before).toISOString()} (not included) were not run either, and are not recorded (a tick records at most ${MAX_STALLED_SLOTS} such slots of one automation)`;
  const slots = due.map(
    (at, i): PlannedSlot =>
      i < skip
        ? skipped(at, SLOTS_PAST_BOUND)
        : { id: sortableId("run"), slot: at.toISOString(), status: "queued", error: null, finishedAt: null },
  );
  return { slots: [...older, ...slots], next: nextCheck(schedule, now).toISOString() };
}

/**
 * The schedule's slots from `from` (inclusive, rounded up to its minute) to `before` (exclusive):
 * at most MAX_STALLED_SLOTS, the earliest, and whether there were more.
 */
function stalledSlots(schedule: CronSchedule, { from, before }: { from: number; before: number }) {
  const slots: Date[] = [];
  if (!Number.isFinite(from)) return { slots, more: false };
  // nextSlot answers the first slot strictly after its minute: from the minute before `from`'s.
  let at = Math.ceil(from / 60_000) * 60_000 - 60_000;
  for (;;) {
    const slot = nextSlot(schedule, at);
    if (!slot || slot.getTime() >= before) return { slots, more: false };
    if (slots.length === MAX_STALLED_SLOTS) return { slots, more: true };
    slots.push(slot);
    at = slot.getTime();
  }
}

/**
 * The claimed automation's tenant has an active key (not revoked, not expired at `nowIso`). The
 * operator shuts a tenant out by revoking all its keys; its automations then get no run (none is
 * recorded) while their next_run_at still moves on, so they stay and run again from the next slot
 * once the tenant has a key, with no backlog of the slots missed meanwhile.
 */
const tenantHasKey = (db: D1Database, nowIso: string) =>
  exists(
    drizzle(db)
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(and(eq(apiKeys.tenantId, automations.tenantId), keyActiveAt(apiKeys, nowIso))),
  );

export async function claimDuePage(db: D1Database, now: number, limit = CLAIM_PAGE): Promise<ClaimWork> {
  const d = drizzle(db);
  const nowIso = new Date(now).toISOString();
  const page = await d
    .select({
      id: automations.id,
      tenantId: automations.tenantId,
      schedule: automations.schedule,
      nextRunAt: automations.nextRunAt,
    })
    .from(automations)
    .where(and(eq(automations.paused, false), lte(automations.nextRunAt, nowIso)))
    .orderBy(automations.nextRunAt)
    .limit(limit);
  if (!page.length) return { claimed: 0, more: false, rowsRead: 0, statements: 1, jobs: [] };
  const planned = page.map((a) => ({ ...a, ...planClaim(a, now) }));
  const due = planned.filter((r) => r.slots.length > 0);
  // One statement per automation, all its slots in it (a JSON array read through json_each), so an
  // invocation's statements do not grow with the slots owed. INSERT … SELECT from the automation's
  // own row, and only while that row is still as the page read it: one deleted since (its delete
  // took its runs) gets no run that no route could list or delete; one paused, rescheduled or
  // resumed since (such an update moves next_run_at) gets no run for a slot it no longer has. Such
  // a row counts as unclaimed; a rescheduled or resumed one keeps the next_run_at its update gave
  // it (the move below checks next_run_at too). An edit of anything else (the prompt, the name)
  // changes no slot, so it still claims: a run takes the automation as it is when the run starts.
  // A tenant the operator shut out (no active key) gets no run either (tenantHasKey), nor does an
  // automation past its creator key's expiry (expires_at), while the move below still passes their slots. A slot claimed already (a tick again, a continuation) is passed by the unique key, and
  // RETURNING names only the runs this claim added.
  const field = (name: keyof PlannedSlot) => sql`json_extract(slots.value, ${`$.${name}`})`;
  const claims = due.map((r) =>
    d
      .insert(automationRuns)
      .select((qb) =>
        qb
          .select({
            id: sql<string>`${field("id")}`.as("id"),
            automationId: automations.id,
            tenantId: automations.tenantId,
            slot: sql<string>`${field("slot")}`.as("slot"),
            status: sql<string>`${field("status")}`.as("status"),
            conversationId: sql<string | null>`NULL`.as("conversation_id"),
            queuedAt: sql<string>`${nowIso}`.as("queued_at"),
            startedAt: sql<string | null>`NULL`.as("started_at"),
            finishedAt: sql<string | null>`${field("finishedAt")}`.as("finished_at"),
            usage: sql<string | null>`NULL`.as("usage"),
            error: sql<string | null>`${field("error")}`.as("error"),
            attempts: sql<number>`0`.as("attempts"),
            stopReason: sql<string | null>`NULL`.as("stop_reason"),
            usageTurns: sql<string | null>`NULL`.as("usage_turns"),
            prompt: sql<string | null>`NULL`.as("prompt"),
            turnKeysSent: sql<number>`0`.as("turn_keys_sent"),
            turnKeysConversationId: sql<string | null>`NULL`.as("turn_keys_conversation_id"),
            turnKeysFrom: sql<number>`1`.as("turn_keys_from"),
          })
          .from(automations)
          .crossJoin(sql`json_each(${JSON.stringify(r.slots)}) AS slots`)
          .where(
            and(
              eq(automations.id, r.id),
              eq(automations.tenantId, r.tenantId),
              eq(automations.paused, false),
              eq(automations.schedule, r.schedule),
              eq(automations.nextRunAt, r.nextRunAt),
              tenantHasKey(db, nowIso),
              or(isNull(automations.expiresAt), gt(automations.expiresAt, nowIso)),
            ),
          ),
      )
      .onConflictDoNothing({ target: [automationRuns.automationId, automationRuns.slot] })
      .returning({ id: automationRuns.id, status: automationRuns.status }),
  );
  // Only while next_run_at is what the page read: a row rescheduled meanwhile keeps the slot its
  // update gave it (comparing with the tick would not do: an update's slot may be due already).
  const moves = planned.map((r) =>
    d
      .update(automations)
      .set({ nextRunAt: r.next })
      .where(and(eq(automations.id, r.id), eq(automations.nextRunAt, r.nextRunAt))),
  );
  const [first, ...rest] = [...claims, ...moves];
  const outcomes = await d.batch([first, ...rest]);
  const added = outcomes.slice(0, claims.length) as { id: string; status: string }[][];
  const jobs = added
    .flat()
    .flatMap((run) => (run.status === "queued" ? [{ kind: "automation" as const, runId: run.id }] : []));
  return {
    claimed: jobs.length,
    more: page.length === limit,
    rowsRead: page.length,
    statements: 1 + claims.length + moves.length,
    jobs,
  };
}

/** The claim page size: AUTOMATION_CLAIM_PAGE (default CLAIM_PAGE). */
export function claimPageSize(env: Pick<Env, "AUTOMATION_CLAIM_PAGE">): number {
  return envConfig(env).AUTOMATION_CLAIM_PAGE;
}

/**
 * One invocation's share of a tick: a page of due automations; when the page was full, a
 * continuation on the claims queue claims the next page in another invocation, so no
 * invocation's work grows with the number of tenants. Each invocation logs its work (one line,
 * what bench:scale reads and what a deployment's logs show).
 */
export async function claimDueRuns(env: Env, now: number): Promise<{ claimed: number; continued: boolean }> {
  const started = Date.now();
  const work = await claimDuePage(env.DB, now, claimPageSize(env));
  // The claimed runs first: a run whose message is lost here is sent again by a later tick
  // (unsentRuns), but the sooner it goes the better.
  await sendRuns(env, work.jobs);
  // On its own queue, so the next page is claimed at once rather than behind this page's turns.
  if (work.more) await (env.AUTOMATION_CLAIMS as Queue<ClaimContinuation>).send({ kind: "claim", scheduledTime: now });
  console.log(
    JSON.stringify({
      event: "automation_claims",
      tick: new Date(now).toISOString(),
      claimed: work.claimed,
      continued: work.more,
      rowsRead: work.rowsRead,
      statements: work.statements,
      ms: Date.now() - started,
    }),
  );
  return { claimed: work.claimed, continued: work.more };
}

/**
 * The automation is past its creator key's expiry at `now` (epoch ms): a tick claims none of its
 * slots, and a run claimed before then starts no turn (automation-runner).
 */
export const pastExpiry = (automation: Pick<Automation, "expiresAt">, now: number): boolean =>
  automation.expiresAt !== null && Date.parse(automation.expiresAt) <= now;

/**
 * Takes the run for one queue delivery (`attempt` = the message's delivery count). A delivery
 * with a higher count than the one that last took the run takes it over — the earlier attempt
 * failed or its invocation died mid-work, since the queue redelivers only after that — while a
 * duplicate of the same delivery, or any delivery of a finished run, finds nothing to start.
 */
export async function startRun(
  db: D1Database,
  {
    runId,
    attempt,
    now,
  }: {
    runId: string;
    attempt: number;
    /** The attempt's clock (epoch ms): the expiry it judges by, so the runner's judgement agrees. */
    now: number;
  },
): Promise<{ run: AutomationRunRow; automation: Automation | null } | null> {
  const [row] = await drizzle(db)
    .update(automationRuns)
    .set({ status: "running", attempts: attempt, startedAt: new Date().toISOString() })
    .where(
      and(eq(automationRuns.id, runId), inArray(automationRuns.status, OPEN), lt(automationRuns.attempts, attempt)),
    )
    .returning();
  if (!row) return null;
  const automation =
    (await drizzle(db).select().from(automations).where(eq(automations.id, row.automationId)).get()) ?? null;
  // The first attempt that goes on to run the slot stores the prompt it sends: every later attempt
  // sends that same prompt, so its turn keys replay the earlier turns even when the automation's
  // prompt was edited meanwhile (a slot's prompt runs once). A paused automation's stores none,
  // nor does one past its creator key's expiry: neither runs the prompt.
  if (row.prompt === null && automation && !automation.paused && !pastExpiry(automation, now)) {
    const [stored] = await drizzle(db)
      .update(automationRuns)
      .set({ prompt: automation.prompt })
      .where(and(eq(automationRuns.id, runId), eq(automationRuns.attempts, attempt), isNull(automationRuns.prompt)))
      .returning({ prompt: automationRuns.prompt });
    if (stored) row.prompt = stored.prompt;
  }
  return { run: row, automation };
}

/**
 * The attempt of delivery `attempt` is about to send a turn under key `n` (runTurnKey) to
 * `conversationId`: the run remembers the highest key sent and the conversation it went to (a key
 * is known only there), so a later attempt knows which keys may only replay, and where. `moved`:
 * the conversation is not the one the earlier keys went to, so `n` is the first key sent to it
 * (turn_keys_from) and the earlier keys are never sent again; the earlier attempts' failed turns the
 * attempt passed over (`passed`) are counted in the run's usage now, as no later attempt replays
 * them. False when the attempt no longer holds the run (it then starts no turn).
 */
export async function markTurnKeySent(
  db: D1Database,
  {
    runId,
    attempt,
    n,
    conversationId,
    moved = false,
    passed = [],
  }: { runId: string; attempt: number; n: number; conversationId: string; moved?: boolean; passed?: RunTurn[] },
): Promise<boolean> {
  const counted = moved && passed.length > 0 ? await runUsageWith(db, runId, { passed }) : {};
  const [row] = await drizzle(db)
    .update(automationRuns)
    .set({
      turnKeysSent: sql`MAX(${automationRuns.turnKeysSent}, ${n})`,
      turnKeysConversationId: conversationId,
      ...(moved ? { turnKeysFrom: n } : {}),
      ...counted,
    })
    .where(
      and(eq(automationRuns.id, runId), eq(automationRuns.attempts, attempt), eq(automationRuns.status, "running")),
    )
    .returning({ id: automationRuns.id });
  return row !== undefined;
}

/**
 * Takes back the mark of key `n` (markTurnKeySent) when the conversation refused it before any
 * turn existed under it (a turn_paused refusal frees the key): a paused automation's retry then
 * never sends it as "already sent", which would start its turn.
 */
export async function unmarkTurnKeySent(
  db: D1Database,
  { runId, attempt, n }: { runId: string; attempt: number; n: number },
): Promise<void> {
  await drizzle(db)
    .update(automationRuns)
    .set({ turnKeysSent: n - 1 })
    .where(
      and(
        eq(automationRuns.id, runId),
        eq(automationRuns.attempts, attempt),
        eq(automationRuns.status, "running"),
        eq(automationRuns.turnKeysSent, n),
      ),
    );
}

/**
 * Whether the attempt of delivery `attempt` still holds the run: running under its count, not
 * taken over by a later delivery (startRun) nor closed (closeAbandonedRuns, the dead-letter queue).
 */
export async function holdsRun(
  db: D1Database,
  { runId, attempt }: { runId: string; attempt: number },
): Promise<boolean> {
  const row = await drizzle(db)
    .select({ status: automationRuns.status, attempts: automationRuns.attempts })
    .from(automationRuns)
    .where(eq(automationRuns.id, runId))
    .get();
  return row?.status === "running" && row.attempts === attempt;
}

/** A turn of the run: the number of its key (automation-runner's runTurnKey) and what it spent. */
export interface RunTurn {
  key: number;
  usage: Usage | null;
}

/**
 * The run's usage with an attempt's turns added, each turn key once: its own turn (`turn`, whose
 * outcome it records) and the turns of earlier attempts it passed over (`passed`: they failed),
 * which their attempt added unless it died first. A run's usage is the sum of its turns, failed
 * ones included, as the ledger bills them; the keys it counts are written beside it (usage_turns),
 * so whoever records a turn, it is counted once. Read, then written by the attempt holding the run
 * (its writes are guarded by its count), so no other write interleaves.
 */
async function runUsageWith(
  db: D1Database,
  runId: string,
  { turn, passed = [] }: { turn?: RunTurn | null; passed?: RunTurn[] },
): Promise<{ usage: string | null; usageTurns: string | null }> {
  const row = await drizzle(db)
    .select({ usage: automationRuns.usage, usageTurns: automationRuns.usageTurns })
    .from(automationRuns)
    .where(eq(automationRuns.id, runId))
    .get();
  const before = row?.usage ? (JSON.parse(row.usage) as Usage) : null;
  // Counted before the keys were kept (a usage without them): as then, the attempt's own turn only.
  if (before && row?.usageTurns == null)
    return { usage: JSON.stringify(addUsage(before, turn?.usage)), usageTurns: null };
  // Keys are counted only beside a usage: with none, no turn is counted yet.
  const counted = new Set<number>(before && row?.usageTurns ? (JSON.parse(row.usageTurns) as number[]) : []);
  let total = before;
  for (const t of turn ? [...passed, turn] : passed) {
    if (!t.usage || counted.has(t.key)) continue;
    counted.add(t.key);
    total = addUsage(total ?? zeroUsage(), t.usage);
  }
  if (!total) return { usage: null, usageTurns: null };
  return { usage: JSON.stringify(total), usageTurns: JSON.stringify([...counted].sort((a, b) => a - b)) };
}

/** An attempt failed and the queue will deliver the run again: the error stays visible meanwhile. */
export async function recordFailedAttempt(
  db: D1Database,
  {
    runId,
    attempt,
    error,
    conversationId,
    stopReason = null,
    turn,
    passed,
  }: {
    runId: string;
    attempt: number;
    error: string;
    conversationId?: string | null;
    /** The stop_reason of the attempt's turn, null when it ended none. */
    stopReason?: string | null;
    /** The attempt's turn, its usage added to the run's (unless its key is counted already). */
    turn?: RunTurn | null;
    /** Earlier attempts' failed turns the attempt passed over: added when their keys are not counted yet. */
    passed?: RunTurn[];
  },
): Promise<void> {
  const counted = await runUsageWith(db, runId, { turn, passed });
  await drizzle(db)
    .update(automationRuns)
    .set({
      status: "retrying",
      error,
      stopReason,
      ...counted,
      ...(conversationId != null ? { conversationId } : {}),
    })
    .where(
      and(eq(automationRuns.id, runId), eq(automationRuns.attempts, attempt), eq(automationRuns.status, "running")),
    );
}

/**
 * The queue gave up on the run (its message reached the dead-letter queue): it ends failed, with
 * the last attempt's error, or — when that attempt died before it could say — that it never finished.
 */
export async function recordDeadRun(db: D1Database, runId: string): Promise<boolean> {
  const r = await drizzle(db)
    .update(automationRuns)
    .set({
      status: "failed",
      finishedAt: new Date().toISOString(),
      error: sql`COALESCE(${automationRuns.error}, 'the run did not finish in ' || ${automationRuns.attempts} || ' attempts')`,
    })
    .where(and(eq(automationRuns.id, runId), inArray(automationRuns.status, OPEN)));
  return (r.meta.changes ?? 0) > 0;
}

/** The attempt that holds the run ends it: a stale attempt's late answer changes nothing. */
export async function finishRun(
  db: D1Database,
  {
    runId,
    attempt,
    outcome,
    passed,
  }: {
    runId: string;
    attempt: number;
    /** Earlier attempts' failed turns the attempt passed over: added when their keys are not counted yet. */
    passed?: RunTurn[];
    outcome: {
      /** failed: for good, not retried (an attempt again could only fail the same way). */
      status: "succeeded" | "skipped" | "failed";
      conversationId?: string | null;
      /** The turn whose outcome the run takes, its usage added to the earlier attempts' turns (once). */
      turn?: RunTurn | null;
      error?: string | null;
      /** The stop_reason of the turn whose outcome the run takes; null when no turn ended. */
      stopReason?: string | null;
    };
  },
): Promise<void> {
  const counted = await runUsageWith(db, runId, { turn: outcome.turn, passed });
  await drizzle(db)
    .update(automationRuns)
    .set({
      status: outcome.status,
      conversationId: outcome.conversationId ?? null,
      // A skipped run ran no prompt: one its attempt stored (startRun) before the automation was
      // found paused or past its key's expiry goes, so the run shows none.
      ...(outcome.status === "skipped" ? { prompt: null } : {}),
      ...counted,
      error: outcome.error ?? null,
      stopReason: outcome.stopReason ?? null,
      finishedAt: new Date().toISOString(),
    })
    .where(
      and(eq(automationRuns.id, runId), eq(automationRuns.attempts, attempt), eq(automationRuns.status, "running")),
    );
}
