// ChannelDO: one per (tenant, channel name), the single writer of which conversation a channel
// currently points at. Resolving is serialized, so concurrent first messages or a rotation race
// never create two conversations. A conversation idle longer than the channel's rotation time (no
// message on the channel, no message added to it, no turn running) is left as it is (searchable and
// readable) and the next message starts a new one.
//
// The channel's activity clock is the object's own (what resolve, get and the rotation read). A
// message moves it only once its turn started (touch): one its conversation refuses does nothing.
// A message that neither creates nor rotates the conversation writes no D1 before its turn starts, as
// every later message of the serialized channel would wait for that primary write too. The listing
// row's lastActivityAt follows from an alarm a moment later, one write for all messages since.
// Every D1 write the object makes for a request goes through a session of its own at the primary,
// whose bookmark it answers, so the request's `x-d1-bookmark` covers it (workers/chat/d1-session.ts).
import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { conversations } from "../db/schema";
import { sessionDatabase } from "../services/d1-session-database";
import { createConversation } from "./conversation-create";
import type { LocationHint } from "../core/location-hint";

export const DEFAULT_ROTATION_SECONDS = 3 * 60 * 60;
/** How long the listing row's activity may lag the channel's: messages within it share one write. */
export const LISTING_ACTIVITY_LAG_MS = 1000;
/** How long a message resolved without marking keeps its conversation from rotating, untouched (its caller died). */
export const HOLD_MS = 60_000;

export interface ChannelState {
  tenantId: string;
  name: string;
  conversationId: string | null;
  rotationSeconds: number;
  /** When the channel last carried a message (ms since epoch). */
  lastActivityAt: number | null;
  createdAt: string;
  rotations: number;
  /**
   * The conversation the listing row names, as far as the object knows: set after a D1 write that
   * named one. Differing from `conversationId` (the in-line write of a create or rotation failed
   * after the state took the new one), the next write names it. A state stored before this field
   * has none, taken as matching.
   */
  listed?: string | null;
}

export interface ChannelView extends Omit<ChannelState, "tenantId" | "lastActivityAt" | "listed"> {
  lastActivityAt: string | null;
}

/**
 * The project a channel's conversations belong to: none. A turn's client tools are checked against
 * the tenant's tools in this scope before the channel resolves (workers/chat/turns.ts).
 */
export const CHANNEL_PROJECT_ID: string | null = null;

export const channelObjectName = (tenantId: string, name: string) => `${tenantId}/${name}`;

/**
 * Where a channel's next message goes, or why no conversation could be started there. `bookmark`:
 * where the D1 writes of this resolve reached (a create or rotation), null when it wrote none.
 */
export type ChannelPlace =
  | { conversationId: string; rotatedFrom: string | null; bookmark?: string | null; hold?: number }
  | { refused: string };

/** The D1 the object writes for one request: a session at the primary, whose bookmark it answers. */
type WriteSession = { db: D1Database; bookmark(): string | null };

function writeSession(db: D1Database): WriteSession {
  const session = db.withSession("first-primary");
  return { db: sessionDatabase(db, session), bookmark: () => session.getBookmark() };
}

export class ChannelDO extends DurableObject<Env> {
  private chain: Promise<unknown> = Promise.resolve();
  /**
   * Messages resolved without marking the channel active, whose turns are still to start (in
   * memory only): each keeps its conversation from rotating until its caller touches (or lets go).
   */
  private holds = new Map<number, { conversationId: string; until: number }>();
  private nextHold = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(
        `CREATE TABLE IF NOT EXISTS channel (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)`,
      );
    });
  }

  private stored(): ChannelState | null {
    const row = this.ctx.storage.sql.exec<{ state: string }>(`SELECT state FROM channel WHERE id = 1`).toArray()[0];
    return row ? (JSON.parse(row.state) as ChannelState) : null;
  }

  private read(tenantId: string, name: string): ChannelState | null {
    const state = this.stored();
    return state && state.tenantId === tenantId && state.name === name ? state : null;
  }

  private store(state: ChannelState): void {
    this.ctx.storage.sql.exec(
      `INSERT INTO channel (id, state) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state`,
      JSON.stringify(state),
    );
  }

  /**
   * Stores the state and its listing row, through `db`. `conversation: false` leaves the listed
   * conversation as it is (a row created here takes none): only a message's resolve points the
   * listing at one, so a write that did not resolve never puts back a conversation a delete's purge
   * took off it. The one exception is a repair: a resolve whose own write failed left the listing
   * on an older conversation than the state's, and no later message names it again.
   */
  private async write(state: ChannelState, opts: { db: D1Database; conversation?: boolean }): Promise<void> {
    const { db } = opts;
    const repair = state.listed !== undefined && state.listed !== state.conversationId;
    const conversation = (opts.conversation ?? true) || repair;
    this.store(state);
    const now = new Date().toISOString();
    const lastActivity = state.lastActivityAt ? new Date(state.lastActivityAt).toISOString() : null;
    const named = conversation ? "excluded.conversation_id" : "channels.conversation_id";
    await db
      .prepare(
        `INSERT INTO channels (tenant_id, name, conversation_id, rotation_seconds, last_activity_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(tenant_id, name) DO UPDATE SET conversation_id = ${named}, rotation_seconds = excluded.rotation_seconds, last_activity_at = excluded.last_activity_at, updated_at = excluded.updated_at`,
      )
      .bind(
        state.tenantId,
        state.name,
        conversation ? state.conversationId : null,
        state.rotationSeconds,
        lastActivity,
        state.createdAt,
        now,
      )
      .run();
    if (repair) await this.unlistIfDeleted(state, db);
    // Only after the write that named it: a failed one leaves the difference for the next to repair.
    if (!conversation) return;
    state.listed = state.conversationId;
    this.store(state);
  }

  /**
   * A repair names a conversation its resolve made a while ago, which may have been deleted since:
   * its purge cleared no row naming it then. Its listing row goes in the same D1 batch as that
   * clearing, so, asked after the write, either the row is there (the purge is still to come and
   * clears this write too) or it is gone, and the pointer is cleared here as the purge would have.
   */
  private async unlistIfDeleted(state: ChannelState, db: D1Database): Promise<void> {
    const { tenantId, name, conversationId } = state;
    if (!conversationId) return;
    const [row] = await drizzle(db)
      .select({ id: conversations.id })
      .from(conversations)
      .where(and(eq(conversations.tenantId, tenantId), eq(conversations.id, conversationId)));
    if (row) return;
    await db
      .prepare(`UPDATE channels SET conversation_id = NULL WHERE tenant_id = ? AND name = ? AND conversation_id = ?`)
      .bind(tenantId, name, conversationId)
      .run();
  }

  /** One operation at a time, in arrival order. */
  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.catch(() => {});
    return run;
  }

  private fresh(tenantId: string, name: string, now = Date.now()): ChannelState {
    return {
      tenantId,
      name,
      conversationId: null,
      rotationSeconds: DEFAULT_ROTATION_SECONDS,
      lastActivityAt: null,
      createdAt: new Date(now).toISOString(),
      rotations: 0,
      listed: null,
    };
  }

  /**
   * The conversation the next message of this channel belongs to, rotating first when the
   * current one has been idle for longer than the rotation time, or is `gone` (the caller found it
   * deleted). Marks the channel active, unless `mark` is false: a message that moves on the channel
   * (a first create or a rotation) is written at once either way, and one that does not leaves its
   * clock for touch, once its turn started, holding the conversation meanwhile (`hold`).
   */
  resolve(at: {
    tenantId: string;
    name: string;
    now?: number;
    gone?: string | null;
    locationHint?: LocationHint | null;
    mark?: boolean;
  }): Promise<ChannelPlace> {
    const { tenantId, name, now = Date.now(), gone = null, locationHint = null, mark = true } = at;
    return this.serialized(async (): Promise<ChannelPlace> => {
      // Created at its first activity: `now` is the caller's clock, taken before any wait here.
      const state = this.read(tenantId, name) ?? this.fresh(tenantId, name, now);
      const moves = !state.conversationId || state.conversationId === gone || (await this.idle(state, now));
      // The clock only (a later message never moves it back): the listing follows from the alarm.
      if (!moves && !mark) {
        const hold = ++this.nextHold;
        this.holds.set(hold, { conversationId: state.conversationId!, until: Date.now() + HOLD_MS });
        return { conversationId: state.conversationId!, rotatedFrom: null, bookmark: null, hold };
      }
      if (!moves) {
        state.lastActivityAt = Math.max(state.lastActivityAt ?? 0, now);
        this.store(state);
        await this.listActivityLater();
        return { conversationId: state.conversationId!, rotatedFrom: null, bookmark: null };
      }
      const d1 = writeSession(this.env.DB);
      // Placed near whoever's message (or automation) made it: see core/location-hint.ts.
      const created = await createConversation(
        { ...this.env, DB: d1.db },
        { tenantId, init: { title: `#${name}`, projectId: CHANNEL_PROJECT_ID ?? undefined }, locationHint },
      );
      // Nothing is written: the caller answers why no conversation could be started here.
      if (created.kind === "invalid") return { refused: created.message };
      let rotatedFrom: string | null = null;
      if (state.conversationId) {
        rotatedFrom = state.conversationId;
        state.rotations++;
      }
      state.conversationId = created.view.id;
      state.lastActivityAt = now;
      // In line: the new conversation's listing row was written anyway, and the channel's must name it.
      // Failed, the state already names it (`listed` does not): the alarm's write repairs the row.
      await this.write(state, { db: d1.db }).catch(async (err: unknown) => {
        await this.listActivityLater();
        throw err;
      });
      return { conversationId: state.conversationId, rotatedFrom, bookmark: d1.bookmark() };
    });
  }

  /**
   * A message's turn started on `conversationId` at `now` (`ran`; false: it was refused, or only
   * replayed): the channel's clock moves, its listing following from the alarm, and the message's
   * `hold` is let go either way. A channel that moved to another conversation since, or was
   * removed, keeps its clock: the turn was not its current conversation's.
   */
  touch(at: {
    tenantId: string;
    name: string;
    conversationId: string;
    now: number;
    ran: boolean;
    hold?: number;
  }): Promise<void> {
    const { tenantId, name, conversationId, now, ran, hold } = at;
    if (hold !== undefined) this.holds.delete(hold);
    if (!ran) return Promise.resolve();
    return this.serialized(async () => {
      const state = this.read(tenantId, name);
      if (!state || state.conversationId !== conversationId) return;
      // A later message never moves it back.
      if ((state.lastActivityAt ?? 0) >= now) return;
      state.lastActivityAt = now;
      this.store(state);
      await this.listActivityLater();
    });
  }

  /** A message resolved without marking, whose turn is still to start, on the conversation (see touch). */
  private held(conversationId: string): boolean {
    const now = Date.now();
    let found = false;
    for (const [id, hold] of this.holds) {
      if (hold.until < now) this.holds.delete(id);
      else if (hold.conversationId === conversationId) found = true;
    }
    return found;
  }

  /** One alarm for the listing's activity, whichever message set it: every one until it fires shares its write. */
  private async listActivityLater(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null)
      await this.ctx.storage.setAlarm(Date.now() + LISTING_ACTIVITY_LAG_MS);
  }

  /**
   * The listing row's activity, as the object's state now has it (its conversation left as listed,
   * unless a failed resolve left it behind: see write). A channel removed since has no state, and
   * nothing is written; a failed write is retried by the alarm's own retries.
   */
  override async alarm(): Promise<void> {
    await this.serialized(async () => {
      const state = this.stored();
      if (state) await this.write(state, { db: this.env.DB, conversation: false });
    });
  }

  /**
   * Idle longer than the rotation time. The channel's clock (when a message last came) is checked
   * first; past it, the conversation's own is asked: a reply that ended, or a turn still running,
   * is activity too, so a follow-up to a long reply stays with it; as is a message resolved there
   * whose turn is still to start (held).
   */
  private async idle(state: ChannelState, now: number): Promise<boolean> {
    const limit = state.rotationSeconds * 1000;
    if (state.lastActivityAt !== null && now - state.lastActivityAt <= limit) return false;
    const conversationId = state.conversationId!;
    if (this.held(conversationId)) return false;
    // Unanswered (or gone), the channel's own clock decides, as it did before it asked.
    const seen = await this.env.CONVERSATION.get(this.env.CONVERSATION.idFromName(conversationId))
      .activity({ tenantId: state.tenantId, conversationId })
      .catch((err: unknown) => {
        console.error("channel: the conversation's activity is unknown", err);
        return null;
      });
    if (!seen) return true;
    if (seen.busy) return false;
    const last = Math.max(state.lastActivityAt ?? 0, seen.at ? Date.parse(seen.at) : 0);
    return now - last > limit;
  }

  /** The channel as configured, and where the D1 write of its listing row reached. */
  configure(
    tenantId: string,
    name: string,
    change: { rotationSeconds?: number },
  ): Promise<{ view: ChannelView; bookmark: string | null }> {
    return this.serialized(async () => {
      const state = this.read(tenantId, name) ?? this.fresh(tenantId, name);
      if (change.rotationSeconds !== undefined) state.rotationSeconds = change.rotationSeconds;
      // The listing keeps its conversation: a deleted one's purge cleared it, and this write must
      // not name it again. The answer shows a deleted one as none, as get() does.
      const d1 = writeSession(this.env.DB);
      await this.write(state, { db: d1.db, conversation: false });
      return { view: view(await this.shown(state)), bookmark: d1.bookmark() };
    });
  }

  /**
   * Forgets the channel: its listing row first, then its state, so a removal cut short is completed
   * by running it again. Its conversations stay, as any conversation does; the next message to the
   * name starts the channel afresh. `removed` false when there is no such channel; `bookmark`: where
   * the D1 delete reached.
   */
  remove(tenantId: string, name: string): Promise<{ removed: boolean; bookmark: string | null }> {
    return this.serialized(async () => {
      if (!this.read(tenantId, name)) return { removed: false, bookmark: null };
      const d1 = writeSession(this.env.DB);
      await d1.db.prepare(`DELETE FROM channels WHERE tenant_id = ? AND name = ?`).bind(tenantId, name).run();
      this.ctx.storage.sql.exec(`DELETE FROM channel WHERE id = 1`);
      // A pending activity write finds no state and writes nothing; it need not fire at all.
      await this.ctx.storage.deleteAlarm();
      return { removed: true, bookmark: d1.bookmark() };
    });
  }

  /** The channel; a conversation deleted since its last message is shown as none (the next message rotates). */
  async get(tenantId: string, name: string): Promise<ChannelView | null> {
    const state = this.read(tenantId, name);
    return state ? view(await this.shown(state)) : null;
  }

  /** The state as shown: a conversation deleted since the channel's last message is none. */
  private async shown(state: ChannelState): Promise<ChannelState> {
    const { tenantId, conversationId } = state;
    if (!conversationId) return state;
    const alive = await this.env.CONVERSATION.get(this.env.CONVERSATION.idFromName(conversationId))
      .activity({ tenantId, conversationId })
      .then((seen) => seen !== null)
      .catch(() => true);
    return alive ? state : { ...state, conversationId: null };
  }
}

function view(s: ChannelState): ChannelView {
  const { tenantId: _t, lastActivityAt, listed: _l, ...rest } = s;
  return { ...rest, lastActivityAt: lastActivityAt ? new Date(lastActivityAt).toISOString() : null };
}
