// ChannelDO: one per (tenant, channel name), the single writer of which conversation a channel
// currently points at. Resolving is serialized, so concurrent first messages or a rotation race
// never create two conversations. A conversation idle longer than the channel's rotation time (no
// message on the channel, no message added to it, no turn running) is left as it is (searchable and
// readable) and the next message starts a new one.
import { DurableObject } from "cloudflare:workers";
import { createConversation } from "./conversation-create";
import type { LocationHint } from "../core/location-hint";

export const DEFAULT_ROTATION_SECONDS = 3 * 60 * 60;

export interface ChannelState {
  tenantId: string;
  name: string;
  conversationId: string | null;
  rotationSeconds: number;
  /** When the channel last carried a message (ms since epoch). */
  lastActivityAt: number | null;
  createdAt: string;
  rotations: number;
}

export interface ChannelView extends Omit<ChannelState, "tenantId" | "lastActivityAt"> {
  lastActivityAt: string | null;
}

export const channelObjectName = (tenantId: string, name: string) => `${tenantId}/${name}`;

/** Where a channel's next message goes, or why no conversation could be started there. */
export type ChannelPlace = { conversationId: string; rotatedFrom: string | null } | { refused: string };

export class ChannelDO extends DurableObject<Env> {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(
        `CREATE TABLE IF NOT EXISTS channel (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)`,
      );
    });
  }

  private read(tenantId: string, name: string): ChannelState | null {
    const row = this.ctx.storage.sql.exec<{ state: string }>(`SELECT state FROM channel WHERE id = 1`).toArray()[0];
    const state = row ? (JSON.parse(row.state) as ChannelState) : null;
    return state && state.tenantId === tenantId && state.name === name ? state : null;
  }

  /**
   * Stores the state and its listing row. `conversation: false` leaves the listed conversation as
   * it is (a row created here takes none): only a message's resolve points the listing at one, so
   * a write that did not resolve never puts back a conversation a delete's purge took off it.
   */
  private async write(state: ChannelState, opts: { conversation?: boolean } = {}): Promise<void> {
    const { conversation = true } = opts;
    this.ctx.storage.sql.exec(
      `INSERT INTO channel (id, state) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state`,
      JSON.stringify(state),
    );
    const now = new Date().toISOString();
    const lastActivity = state.lastActivityAt ? new Date(state.lastActivityAt).toISOString() : null;
    const listed = conversation ? "excluded.conversation_id" : "channels.conversation_id";
    await this.env.DB.prepare(
      `INSERT INTO channels (tenant_id, name, conversation_id, rotation_seconds, last_activity_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(tenant_id, name) DO UPDATE SET conversation_id = ${listed}, rotation_seconds = excluded.rotation_seconds, last_activity_at = excluded.last_activity_at, updated_at = excluded.updated_at`,
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
    };
  }

  /**
   * The conversation the next message of this channel belongs to, rotating first when the
   * current one has been idle for longer than the rotation time, or is `gone` (the caller found it
   * deleted). Marks the channel active.
   */
  resolve(at: {
    tenantId: string;
    name: string;
    now?: number;
    gone?: string | null;
    locationHint?: LocationHint | null;
  }): Promise<ChannelPlace> {
    const { tenantId, name, now = Date.now(), gone = null, locationHint = null } = at;
    return this.serialized(async (): Promise<ChannelPlace> => {
      // Created at its first activity: `now` is the caller's clock, taken before any wait here.
      const state = this.read(tenantId, name) ?? this.fresh(tenantId, name, now);
      let rotatedFrom: string | null = null;
      if (!state.conversationId || state.conversationId === gone || (await this.idle(state, now))) {
        // Placed near whoever's message (or automation) made it: see core/location-hint.ts.
        const created = await createConversation(this.env, { tenantId, init: { title: `#${name}` }, locationHint });
        // Nothing is written: the caller answers why no conversation could be started here.
        if (created.kind === "invalid") return { refused: created.message };
        if (state.conversationId) {
          rotatedFrom = state.conversationId;
          state.rotations++;
        }
        state.conversationId = created.view.id;
      }
      state.lastActivityAt = now;
      await this.write(state);
      return { conversationId: state.conversationId!, rotatedFrom };
    });
  }

  /**
   * Idle longer than the rotation time. The channel's clock (when a message last came) is checked
   * first; past it, the conversation's own is asked: a reply that ended, or a turn still running,
   * is activity too, so a follow-up to a long reply stays with it.
   */
  private async idle(state: ChannelState, now: number): Promise<boolean> {
    const limit = state.rotationSeconds * 1000;
    if (state.lastActivityAt !== null && now - state.lastActivityAt <= limit) return false;
    const conversationId = state.conversationId!;
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

  configure(tenantId: string, name: string, change: { rotationSeconds?: number }): Promise<ChannelView> {
    return this.serialized(async () => {
      const state = this.read(tenantId, name) ?? this.fresh(tenantId, name);
      if (change.rotationSeconds !== undefined) state.rotationSeconds = change.rotationSeconds;
      // The listing keeps its conversation: a deleted one's purge cleared it, and this write must
      // not name it again. The answer shows a deleted one as none, as get() does.
      await this.write(state, { conversation: false });
      return view(await this.shown(state));
    });
  }

  /**
   * Forgets the channel: its listing row first, then its state, so a removal cut short is completed
   * by running it again. Its conversations stay, as any conversation does; the next message to the
   * name starts the channel afresh. False when there is no such channel.
   */
  remove(tenantId: string, name: string): Promise<boolean> {
    return this.serialized(async () => {
      if (!this.read(tenantId, name)) return false;
      await this.env.DB.prepare(`DELETE FROM channels WHERE tenant_id = ? AND name = ?`).bind(tenantId, name).run();
      this.ctx.storage.sql.exec(`DELETE FROM channel WHERE id = 1`);
      return true;
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
  const { tenantId: _t, lastActivityAt, ...rest } = s;
  return { ...rest, lastActivityAt: lastActivityAt ? new Date(lastActivityAt).toISOString() : null };
}
