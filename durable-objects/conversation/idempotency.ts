// The conversation's idempotency ledger: Idempotency-Key -> the turn it started and that turn's
// outcome, in the ConversationDO's SQLite (the single writer, so claiming a key is one synchronous
// step and two requests can never both run a turn under it). Rows live IDEMPOTENCY_TTL_MS.
//
// A row is written as the turn goes (its id, each saved seq, its error, its end), so an object
// that dies mid-turn leaves a row saying what the turn saved; the next incarnation reports that
// turn as interrupted instead of running it again.
import type { TurnEvent } from "../../core/events";
import { IDEMPOTENCY_TTL_MS } from "../../core/idempotency-key";
import { zeroUsage, type StoredMessage, type Usage } from "../../core/types";

type TurnEnd = Extract<TurnEvent, { type: "turn_end" }>;
type TurnError = Extract<TurnEvent, { type: "error" }>["error"];
type RequiresAction = Extract<TurnEvent, { type: "requires_action" }>;
/** An event's payload as the ledger keeps it: without its type, turn and agent. */
type Kept<T extends TurnEvent["type"]> = Omit<Extract<TurnEvent, { type: T }>, "type" | "turnId" | "agent">;

type NoticeType = "refusal" | "model_changed" | "exchange_superseded";
/** A refusal, model change or superseded exchange as the ledger keeps it: without its turn and agent. */
type Notice = { [T in NoticeType]: Omit<Extract<TurnEvent, { type: T }>, "turnId" | "agent"> }[NoticeType];

/** What a key's first turn did: enough to answer a retry with the same status and body. */
export interface KeyedOutcome {
  turnId: string | null;
  seqs: number[];
  error: TurnError | null;
  end: Omit<TurnEnd, "type" | "turnId"> | null;
  /** The client calls a turn that paused waited on (absent from rows written before it was kept). */
  requiresAction?: Omit<RequiresAction, "type" | "turnId"> | null;
  /**
   * The master agent's refusals, model changes and superseded exchange, in the order the turn sent
   * them (absent from older rows, which kept the three below instead).
   */
  notices?: Notice[];
  /** Rows written before `notices`: the last refusal, the model changes, the superseded exchange. */
  refusal?: Kept<"refusal"> | null;
  modelChanges?: Kept<"model_changed">[];
  superseded?: Kept<"exchange_superseded"> | null;
  /** What a turn its object died in had spent, as its dead-turn meter billed it (no turn_end to say so). */
  spent?: Usage;
}

/** Why a keyed request runs nothing: 409 while the first turn runs, 422 for another body. */
export interface IdempotencyRefusal {
  status: 409 | 422;
  type: "idempotency_in_progress" | "idempotency_key_reused";
  message: string;
}

/**
 * What `ConversationDO.send` answers instead of a stream when a key's turn is not run. `turnId`: for
 * idempotency_in_progress, the key's turn (queued or running) once it is known, so a stop can name it.
 */
export type KeyedAnswer =
  | { kind: "replay"; events: TurnEvent[] }
  | { kind: "refused"; refusal: IdempotencyRefusal; turnId?: string };

export type Claim =
  | { kind: "new" }
  | { kind: "refused"; refusal: IdempotencyRefusal; turnId?: string }
  | { kind: "done"; outcome: KeyedOutcome };

interface Row extends Record<string, SqlStorageValue> {
  fingerprint: string;
  status: string;
  incarnation: string;
  outcome: string;
}

const INTERRUPTED: TurnError = {
  type: "turn_interrupted",
  message: "the turn was interrupted before it finished (the conversation restarted); what it saved is in messages",
};

/** The events whose payload a retry's answer carries (the rest are in the saved messages or transient). */
const KEPT_EVENTS: ReadonlySet<TurnEvent["type"]> = new Set([
  "turn_queued",
  "turn_start",
  "message",
  "error",
  "requires_action",
  "refusal",
  "model_changed",
  "exchange_superseded",
  "turn_end",
]);

export class IdempotencyLedger {
  /** Rows marked running by another incarnation of the object belong to a turn that died with it. */
  private readonly incarnation = crypto.randomUUID();

  constructor(private readonly sql: SqlStorage) {}

  ensureSchema(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      key TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      status TEXT NOT NULL,
      incarnation TEXT NOT NULL,
      outcome TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`);
    this.sql.exec(`CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at)`);
  }

  /**
   * Looks the key up and, when it is new, takes it for a turn about to run. Synchronous from
   * lookup to insert, so concurrent requests with one key see exactly one `new`.
   */
  claim(key: string, fingerprint: string, now = Date.now()): Claim {
    // Expiry by index range: each keyed request pays only for what has just expired.
    this.sql.exec(`DELETE FROM idempotency_keys WHERE created_at <= ?`, now - IDEMPOTENCY_TTL_MS);
    const row = this.sql
      .exec<Row>(`SELECT fingerprint, status, incarnation, outcome FROM idempotency_keys WHERE key = ?`, key)
      .toArray()[0];
    if (!row) {
      const empty: KeyedOutcome = { turnId: null, seqs: [], error: null, end: null };
      this.sql.exec(
        `INSERT INTO idempotency_keys (key, fingerprint, status, incarnation, outcome, created_at) VALUES (?, ?, 'running', ?, ?, ?)`,
        key,
        fingerprint,
        this.incarnation,
        JSON.stringify(empty),
        now,
      );
      return { kind: "new" };
    }
    if (row.fingerprint !== fingerprint)
      return {
        kind: "refused",
        refusal: {
          status: 422,
          type: "idempotency_key_reused",
          message:
            "Idempotency-Key: this key was already used for a different turn request on this conversation; send a new key for a new request",
        },
      };
    if (row.status === "running" && row.incarnation === this.incarnation) {
      // Named from its queueing on (name): a client whose answer was lost can still stop it.
      const { turnId } = JSON.parse(row.outcome) as KeyedOutcome;
      const named = turnId ? ` (${turnId}; a stop naming it cancels it)` : "";
      return {
        kind: "refused",
        refusal: {
          status: 409,
          type: "idempotency_in_progress",
          message: `Idempotency-Key: the turn started with this key${named} is still queued or running; retry after it ends to get its outcome`,
        },
        ...(turnId ? { turnId } : {}),
      };
    }
    if (row.status === "running") {
      this.settle(key);
      // A dead turn that saved nothing left no row: the key is free again.
      const settled = this.outcome(key);
      return settled ? { kind: "done", outcome: settled } : this.claim(key, fingerprint, now);
    }
    return { kind: "done", outcome: JSON.parse(row.outcome) as KeyedOutcome };
  }

  /**
   * Names the turn of the key's running row as the turn is queued, before its turn_queued or
   * turn_start: a repeat of the key meanwhile is told that turn (a stop can name it). A row that is
   * done, or gone, is another turn's outcome or none, and stays as it is.
   */
  name(key: string, turnId: string): void {
    const row = this.sql
      .exec<Pick<Row, "status" | "outcome">>(`SELECT status, outcome FROM idempotency_keys WHERE key = ?`, key)
      .toArray()[0];
    if (row?.status !== "running") return;
    const outcome = JSON.parse(row.outcome) as KeyedOutcome;
    if (outcome.turnId === turnId) return;
    this.sql.exec(`UPDATE idempotency_keys SET outcome = ? WHERE key = ?`, JSON.stringify({ ...outcome, turnId }), key);
  }

  /** Notes a turn event against the key's row (called for every event of the keyed turn). */
  record(key: string, event: TurnEvent): void {
    if (!KEPT_EVENTS.has(event.type)) return;
    // A sub-agent's refusal or model change is its own; the answer's are the master agent's.
    if (event.agent && (event.type === "refusal" || event.type === "model_changed")) return;
    const outcome = this.outcome(key);
    if (!outcome) return;
    if (event.type === "turn_queued" || event.type === "turn_start") outcome.turnId = event.turnId;
    else if (event.type === "message") outcome.seqs.push(event.message.seq);
    else if (event.type === "error") outcome.error = event.error;
    else if (event.type === "requires_action")
      outcome.requiresAction = { calls: event.calls, expiresAt: event.expiresAt };
    else if (event.type === "refusal" || event.type === "model_changed" || event.type === "exchange_superseded") {
      // Each kept in the order it came: a replay sends them so (a fallback that refuses too: two refusals).
      const { turnId: _id, agent: _a, ...notice } = event;
      outcome.notices = [...(outcome.notices ?? []), notice];
    } else if (event.type === "turn_end") {
      const { type: _t, turnId: _id, ...end } = event;
      outcome.end = end;
    }
    const done = event.type === "turn_end";
    this.sql.exec(
      `UPDATE idempotency_keys SET outcome = ?, status = ? WHERE key = ?`,
      JSON.stringify(outcome),
      done ? "done" : "running",
      key,
    );
  }

  /**
   * The turn is over, ended or not. A turn that saved nothing is forgotten: a retry under the same
   * key cannot duplicate anything, so it may run (e.g. a turn refused before its user message).
   * One that saved something and never reached turn_end is marked interrupted.
   */
  settle(key: string): void {
    const outcome = this.outcome(key);
    if (!outcome) return;
    if (!outcome.seqs.length) {
      this.sql.exec(`DELETE FROM idempotency_keys WHERE key = ?`, key);
      return;
    }
    if (!outcome.end) outcome.error ??= INTERRUPTED;
    this.sql.exec(
      `UPDATE idempotency_keys SET outcome = ?, status = 'done' WHERE key = ?`,
      JSON.stringify(outcome),
      key,
    );
  }

  private outcome(key: string): KeyedOutcome | null {
    const row = this.sql
      .exec<{ outcome: string }>(`SELECT outcome FROM idempotency_keys WHERE key = ?`, key)
      .toArray()[0];
    return row ? (JSON.parse(row.outcome) as KeyedOutcome) : null;
  }
}

/**
 * The first outcome as the events a turn sends: `turn_start` (marked `replayed`), the exchange a
 * regenerate superseded, the refusals and model changes (in the order the turn sent them), each saved message as stored now, the
 * error if there was one, `requires_action` if the turn paused, and `turn_end` as first sent. No
 * deltas or tool events: the messages hold what those carried.
 */
export function replayEvents(
  outcome: KeyedOutcome,
  range: (fromSeq: number, toSeq: number) => StoredMessage[],
): TurnEvent[] {
  const turnId = outcome.turnId ?? "replay";
  const events: TurnEvent[] = [{ type: "turn_start", turnId, replayed: true }];
  if (outcome.notices) for (const notice of outcome.notices) events.push({ ...notice, turnId });
  else {
    // A row written before the ledger kept their order.
    if (outcome.superseded) events.push({ type: "exchange_superseded", turnId, ...outcome.superseded });
    if (outcome.refusal) events.push({ type: "refusal", turnId, ...outcome.refusal });
    for (const change of outcome.modelChanges ?? []) events.push({ type: "model_changed", turnId, ...change });
  }
  // A turn's seqs are contiguous (turns run one at a time); the filter keeps this true to the row anyway.
  const seqs = new Set(outcome.seqs);
  const saved = outcome.seqs.length
    ? range(Math.min(...outcome.seqs), Math.max(...outcome.seqs)).filter((m) => seqs.has(m.seq))
    : [];
  for (const message of saved) events.push({ type: "message", turnId, message });
  if (outcome.error) events.push({ type: "error", turnId, error: outcome.error });
  if (outcome.requiresAction) events.push({ type: "requires_action", turnId, ...outcome.requiresAction });
  events.push({
    type: "turn_end",
    turnId,
    ...(outcome.end ?? {
      stop_reason: "error",
      // A turn that never ended says what the ledger was given for it (noteDeadTurnSpending).
      usage: outcome.spent ?? zeroUsage(),
      timing: { serverMs: 0, modelMs: 0, queuedMs: 0 },
    }),
  });
  return events;
}

/**
 * The dead-turn meter's part (index-outbox.ts meterDeadTurn, at the object's start, before any
 * request): what it billed for `turnId` goes on the key rows that turn left running, so the
 * interrupted outcome a retry gets carries that usage in its turn_end, as the ledger does.
 */
export function noteDeadTurnSpending(sql: SqlStorage, turnId: string, spent: Usage): void {
  const rows = sql
    .exec<{ key: string; outcome: string }>(
      `SELECT key, outcome FROM idempotency_keys WHERE status = 'running' AND json_extract(outcome, '$.turnId') = ?`,
      turnId,
    )
    .toArray();
  for (const row of rows) {
    const outcome = JSON.parse(row.outcome) as KeyedOutcome;
    sql.exec(`UPDATE idempotency_keys SET outcome = ? WHERE key = ?`, JSON.stringify({ ...outcome, spent }), row.key);
  }
}

/** A claim that runs no turn, as the answer the caller gets. */
export function keyedAnswer(
  claim: Exclude<Claim, { kind: "new" }>,
  range: (fromSeq: number, toSeq: number) => StoredMessage[],
): KeyedAnswer {
  if (claim.kind === "done") return { kind: "replay", events: replayEvents(claim.outcome, range) };
  return { kind: "refused", refusal: claim.refusal, ...(claim.turnId ? { turnId: claim.turnId } : {}) };
}
