// A turn paused on client tools: what it needs to go on (its loop state, the server results of the
// paused step, the calls the client owes, the turn's own tool definitions) kept in the object's
// storage, so a paused turn survives hibernation, eviction and restarts. It also checks a client's
// posted results before anything is written, and knows when the turn's wait runs out (the alarm).
import type { ClientToolResult, ClientToolSpec } from "../../core/client-tools";
import type { TurnEvent } from "../../core/events";
import type { StoredMessage, ToolResultBlock } from "../../core/types";
import type { PausedStep } from "../../agent/turn-loop";
import { errorResult, toldResult } from "../../agent/tool-step";
import type { ConversationRef } from "../../services/record/conversation-head";
import { INTERRUPTED_TOOL_RESULT } from "../../core/replay";
import type { ConversationStore } from "./conversation-store";
import type { ConversationRecord } from "./record";

export interface PausedTurn {
  /** Whose turn: the alarm continues it without a caller. */
  ref: ConversationRef;
  turnId: string;
  step: PausedStep;
  /** The turn's own client tools: its resumed requests carry the same schemas. */
  turnTools: ClientToolSpec[];
  /** The turn's first message: its messages are read again for the in-turn compactor. */
  firstSeq: number;
  /** Epoch ms: after it, the alarm ends the turn with interrupted-call results. */
  expiresAt: number;
  /** The client's results, once all are in: a restart between accepting them and resuming still resumes. */
  answers?: ToolResultBlock[];
  /** The model answering when it paused, when a refusal's fallback had taken over: the rest of the turn runs on it. */
  model?: string;
}

export interface ResultsRefusal {
  status: 400 | 409;
  type: "invalid_request" | "tool_results_conflict";
  message: string;
}

/** A post of results: accepted (the turn with its answers kept), or refused with nothing held. */
export type ResultsAcceptance = { kind: "accepted"; turn: PausedTurn } | { kind: "refused"; refusal: ResultsRefusal };

const PAUSED_KEY = "paused-turn";
/**
 * A paused turn can hold a step's large server results and a client's large answers (a post may be
 * 12 MiB), past the 2 MB a storage value may be: it is kept as JSON in chunks of this many UTF-16
 * units (at most 1 MB each however the text is encoded), all written in one atomic put.
 */
const CHUNK_CHARS = 500_000;
const chunkKey = (i: number) => `${PAUSED_KEY}:${i}`;
const NOTES_KEY = "paused-turn-notes";
/** The seq the deferred notes' last write gave them, kept until they are written (see `saveNotes`). */
const NOTES_TRIED_KEY = "paused-turn-notes-tried";
const ANSWERED_KEY = "client-answered-ids";
/** How soon the alarm retries a resume whose accepted results were not saved. */
const RESUME_RETRY_MS = 30_000;
/** Ids answered before: a second post of one is a 409, not an unknown id. */
const ANSWERED_KEPT = 500;

/**
 * How a call the client owed was closed: its results posted, its wait ran out (at `at`), or a stop
 * ended its turn. Kept under `ANSWERED_KEY`, so a late post is told which (an entry written before
 * 2026-12-06 is the id alone: answered).
 */
type ClosedCall =
  | { id: string; how: "answered" }
  | { id: string; how: "timeout"; at: number }
  | { id: string; how: "stopped"; turnId: string };

export class PausedTurns {
  private current: PausedTurn | null | undefined;
  private loading: Promise<PausedTurn | null> | undefined;
  private answered: ClosedCall[] | undefined;
  /**
   * Posts of results, checked and kept one at a time (see `accept`), in order with the stop that
   * closes the wait (`close`) and the resume that ends it (`resumed`).
   */
  private accepting: Promise<unknown> = Promise.resolve();
  /** The paused turn a stop is ending: results posted for it from now on are refused (`close`). */
  private closing: string | null = null;

  constructor(private readonly ctx: DurableObjectState) {}

  async get(): Promise<PausedTurn | null> {
    if (this.current === undefined) {
      // Callers share a read in flight; a write that landed while it was in flight is newer than
      // what it found, so the read never replaces it (a stale copy would let answered calls pass).
      this.loading ??= this.read().finally(() => (this.loading = undefined));
      const stored = await this.loading;
      if (this.current === undefined) this.current = stored;
    }
    return this.current;
  }

  async pause(turn: PausedTurn): Promise<void> {
    await this.write(turn);
    this.current = turn;
    await this.armAlarm();
  }

  /**
   * Stores the paused turn, then asks the client for its tools' results (`requires_action`); false,
   * with nothing asked, when it could not be stored.
   */
  async pauseAndAsk(turn: PausedTurn, emit: (e: TurnEvent) => void): Promise<boolean> {
    try {
      await this.pause(turn);
    } catch (err) {
      console.error("a paused turn could not be stored", err);
      return false;
    }
    emit({ type: "requires_action", ...pendingView(turn) });
    return true;
  }

  private async read(): Promise<PausedTurn | null> {
    const head = await this.ctx.storage.get<{ chunks: number }>(PAUSED_KEY);
    if (!head) return null;
    const keys = Array.from({ length: head.chunks }, (_, i) => chunkKey(i));
    const parts = await this.ctx.storage.get<string>(keys);
    return JSON.parse(keys.map((k) => parts.get(k) ?? "").join("")) as PausedTurn;
  }

  /** Replaces the stored turn in one atomic put (its old chunks past the new count removed after). */
  private async write(turn: PausedTurn): Promise<void> {
    const json = JSON.stringify(turn);
    const chunks = Math.max(1, Math.ceil(json.length / CHUNK_CHARS));
    if (chunks > 120) throw new Error("a paused turn is larger than the object may keep");
    const before = (await this.ctx.storage.get<{ chunks: number }>(PAUSED_KEY))?.chunks ?? 0;
    const entries: Record<string, unknown> = { [PAUSED_KEY]: { chunks } };
    for (let i = 0; i < chunks; i++) entries[chunkKey(i)] = json.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS);
    await this.ctx.storage.put(entries);
    if (before > chunks)
      await this.ctx.storage.delete(Array.from({ length: before - chunks }, (_, i) => chunkKey(chunks + i)));
  }

  private async remove(): Promise<void> {
    const before = (await this.ctx.storage.get<{ chunks: number }>(PAUSED_KEY))?.chunks ?? 0;
    await this.ctx.storage.delete([PAUSED_KEY, ...Array.from({ length: before }, (_, i) => chunkKey(i))]);
  }

  /**
   * The step's results are saved: the turn is no longer paused, and its ids count as closed: answered
   * when the client's results are in, else stopped (`stopped`: a stop ended it) or timed out.
   * After any post being checked: a post that read the pause before it was removed never writes it
   * back after (the turn would wait again on calls already answered).
   */
  resumed(turn: PausedTurn, stopped = false): Promise<void> {
    return this.serially(async () => {
      const closedAs = (id: string): ClosedCall => {
        if (turn.answers) return { id, how: "answered" };
        if (stopped || this.closing === turn.turnId) return { id, how: "stopped", turnId: turn.turnId };
        return { id, how: "timeout", at: turn.expiresAt };
      };
      const closed = turn.step.pending.map((c) => closedAs(c.id));
      this.answered = [...(await this.answeredIds()), ...closed].slice(-ANSWERED_KEPT);
      await this.ctx.storage.put(ANSWERED_KEY, this.answered);
      await this.remove();
      this.current = null;
      this.closing = null;
    });
  }

  /**
   * A stop is ending the paused turn (`turnId`, or whichever waits): after any post being checked,
   * so the turn returned holds the answers of a post that came first, and a post checked after is
   * refused (409) with nothing taken. Null when no such turn waits. `reopen` undoes it when the
   * stop could not end the turn.
   */
  close(turnId?: string): Promise<PausedTurn | null> {
    return this.serially(async () => {
      const turn = await this.get();
      if (!turn || (turnId !== undefined && turn.turnId !== turnId)) return null;
      this.closing = turn.turnId;
      return turn;
    });
  }

  /** The stop did not end the turn (its save failed): it waits for results again. */
  reopen(turnId: string): void {
    if (this.closing === turnId) this.closing = null;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const done = this.accepting.then(work);
    this.accepting = done.catch(() => {});
    return done;
  }

  /**
   * A client's results checked against the paused step: accepted (and kept) only when they answer
   * every pending call exactly once. A partial post is refused naming the missing ids; nothing is held.
   * Posts are taken one at a time, each checked only after the one before it was kept or refused:
   * the reads and the write await storage, and the input gate does not hold across every await (a
   * cold object's first reads, the caller's own awaits), so two posts for the same calls would
   * otherwise both pass the checks and the later write would replace the earlier one's answers.
   */
  accept(
    results: readonly ClientToolResult[],
    toBlock: (r: ClientToolResult) => ToolResultBlock,
  ): Promise<ResultsAcceptance> {
    return this.serially(() => this.acceptNow(results, toBlock));
  }

  private async acceptNow(
    results: readonly ClientToolResult[],
    toBlock: (r: ClientToolResult) => ToolResultBlock,
  ): Promise<ResultsAcceptance> {
    const closed = new Map((await this.answeredIds()).map((c) => [c.id, c]));
    const turn = await this.get();
    const ids = results.map((r) => r.tool_use_id);
    const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dup.length)
      return refuse(400, "invalid_request", `results: tool_use_id given twice: ${[...new Set(dup)].join(", ")}`);
    const taken = turn?.answers ? new Set(turn.step.pending.map((c) => c.id)) : new Set<string>();
    // An id the waiting turn asks for is its own, even when an earlier turn's call had it (a
    // regenerate of a paused turn meets the same request, and a model may give the same id again).
    const waitingOn = new Set(turn && !turn.answers ? turn.step.pending.map((c) => c.id) : []);
    const again = ids.filter((id) => (closed.has(id) && !waitingOn.has(id)) || taken.has(id));
    // Only results really posted are "already posted"; calls whose wait ran out or a stop closed say so.
    const posted = again.filter((id) => taken.has(id) || closed.get(id)?.how === "answered");
    if (posted.length) return refuse(409, "tool_results_conflict", `results already posted for: ${posted.join(", ")}`);
    const ended = again.length ? closed.get(again[0]!) : undefined;
    if (ended && ended.how !== "answered") return refuse(409, "tool_results_conflict", closedMessage(ended));
    const asked = turn && !turn.answers && ids.some((id) => waitingOn.has(id)) ? turn : null;
    if (asked && this.closing === asked.turnId)
      return refuse(409, "tool_results_conflict", closedMessage({ id: "", how: "stopped", turnId: asked.turnId }));
    if (asked && asked.expiresAt <= Date.now())
      return refuse(409, "tool_results_conflict", closedMessage({ id: "", how: "timeout", at: asked.expiresAt }));
    const pending = new Set(turn && !turn.answers ? turn.step.pending.map((c) => c.id) : []);
    const unknown = ids.filter((id) => !pending.has(id));
    if (unknown.length)
      return refuse(400, "invalid_request", `results: no paused call waits on tool_use_id ${unknown.join(", ")}`);
    const missing = [...pending].filter((id) => !ids.includes(id));
    if (missing.length)
      return refuse(
        400,
        "invalid_request",
        `results: every pending call must be answered in one post; missing ${missing.join(", ")}`,
      );
    const accepted: PausedTurn = { ...turn!, answers: results.map(toBlock) };
    await this.write(accepted);
    this.current = accepted;
    await this.armAlarm();
    return { kind: "accepted", turn: accepted };
  }

  /** Whose paused turn the alarm should continue: one whose answers are in (a restart cut it short), or an expired one. */
  async due(now = Date.now()): Promise<{ ref: ConversationRef; turnId: string } | null> {
    const turn = await this.get();
    return turn && (turn.answers || turn.expiresAt <= now) ? { ref: turn.ref, turnId: turn.turnId } : null;
  }

  /**
   * The alarm time a paused turn needs, for parts that would otherwise clear the alarm: its wait's
   * end, or, once answered, a retry soon after in case the resume never saved the results (a
   * restart, a storage failure); a resume that did save them leaves nothing for it to do.
   */
  async alarmAt(now = Date.now()): Promise<number | null> {
    const turn = await this.get();
    if (!turn) return null;
    // An expired wait whose ending failed (storage down) is tried again soon, never in a tight loop.
    return turn.answers || turn.expiresAt <= now ? now + RESUME_RETRY_MS : turn.expiresAt;
  }

  /** Sets the alarm for the wait's end unless an earlier one is set (the alarm re-arms it after other work). */
  async armAlarm(): Promise<void> {
    const at = await this.alarmAt();
    if (at === null) return;
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
  }

  /**
   * An attachment's note that arrives while a turn waits: kept, and saved right after the step's
   * results. Also while notes a failed write kept are still pending: it goes behind them, so the
   * notes join in upload order (the next turn writes them all before its message). False when
   * neither holds: the note may be saved at once.
   */
  async deferNote(note: string): Promise<boolean> {
    const kept = (await this.ctx.storage.get<string[]>(NOTES_KEY)) ?? [];
    if (!kept.length && !(await this.get())) return false;
    await this.ctx.storage.put(NOTES_KEY, [...kept, note]);
    return true;
  }

  /**
   * Writes the notes deferred during the pause (right after the step's results) and only then takes
   * them out of storage: when the write fails they stay, and the next turn writes them before its
   * message (as attachment notes, not messages of that turn). A batch whose write failed may have landed all the same (record.ts `unsure`): the seq it
   * was given is kept, and notes found there once it is adopted are not written twice.
   */
  async saveNotes(parts: {
    record: Pick<ConversationRecord, "append" | "settle">;
    scope: { store: Pick<ConversationStore, "lastSeq" | "range"> };
  }): Promise<StoredMessage[]> {
    const { record, scope } = parts;
    const notes = (await this.ctx.storage.get<string[]>(NOTES_KEY)) ?? [];
    if (!notes.length) return [];
    await record.settle();
    const tried = await this.ctx.storage.get<number>(NOTES_TRIED_KEY);
    const landed = tried === undefined ? [] : scope.store.range(tried, tried + notes.length - 1);
    let saved = landed;
    if (landed.length !== notes.length || !landed.every((m, i) => isNote(m, notes[i]!))) {
      await this.ctx.storage.put(NOTES_TRIED_KEY, scope.store.lastSeq() + 1);
      saved = await record.append(notes.map((text) => ({ role: "user", content: [{ type: "text", text }] })));
    }
    // Only the notes written leave: one deferred while they were written stays for the next write.
    const rest = ((await this.ctx.storage.get<string[]>(NOTES_KEY)) ?? []).slice(notes.length);
    if (rest.length) await this.ctx.storage.put(NOTES_KEY, rest);
    await this.ctx.storage.delete(rest.length ? [NOTES_TRIED_KEY] : [NOTES_KEY, NOTES_TRIED_KEY]);
    return saved;
  }

  private async answeredIds(): Promise<ClosedCall[]> {
    if (this.answered === undefined) {
      const stored = (await this.ctx.storage.get<(string | ClosedCall)[]>(ANSWERED_KEY)) ?? [];
      // `resumed` may have added ids while the read was in flight: its list is the newer one.
      this.answered ??= stored.map((c): ClosedCall => (typeof c === "string" ? { id: c, how: "answered" } : c));
    }
    return this.answered;
  }
}

function refuse(status: ResultsRefusal["status"], type: ResultsRefusal["type"], message: string): ResultsAcceptance {
  return { kind: "refused", refusal: { status, type, message } };
}

/** Why results for a call closed without them are refused: its turn was stopped, or its wait ran out. */
function closedMessage(call: Exclude<ClosedCall, { how: "answered" }>): string {
  return call.how === "stopped"
    ? `turn ${call.turnId} was stopped; its calls are closed as interrupted`
    : `the turn stopped waiting at ${new Date(call.at).toISOString()}; its calls are closed as interrupted`;
}

/** Whether a saved message is the note `text` (a user message of that text alone). */
const isNote = (m: StoredMessage, text: string): boolean =>
  m.role === "user" && m.content.length === 1 && m.content[0]?.type === "text" && m.content[0].text === text;

/** A paused turn as clients see it (the `requires_action` event's fields). */
export function pendingView(turn: PausedTurn): { turnId: string; calls: PausedStep["pending"]; expiresAt: string } {
  return { turnId: turn.turnId, calls: turn.step.pending, expiresAt: new Date(turn.expiresAt).toISOString() };
}

/** Why a new turn cannot start: the calls the paused one waits on. */
export function pausedMessage(turn: PausedTurn): string {
  return `turn ${turn.turnId} is waiting for client tool results (POST /tool-results): ${turn.step.pending.map((c) => `${c.id} (${c.name})`).join(", ")}`;
}

/**
 * The results that close a paused step's calls no result came for (its wait ran out, or a stop),
 * each told by a tool_result event as every platform result is (their tool_use events went out
 * when the turn paused).
 */
export function interruptedResults(
  step: Pick<PausedStep, "pending">,
  told: { emit: (event: TurnEvent) => void; turnId: string },
): ToolResultBlock[] {
  return step.pending.map((c) => toldResult(told, c, errorResult(c.id, INTERRUPTED_TOOL_RESULT)));
}
