// Single-use, short-lived websocket tickets for browsers, which cannot set an Authorization
// header on a websocket. Stored hashed in D1; consuming one is one atomic DELETE ... RETURNING.
import { randomToken, sha256Hex } from "../../core/ids";

export const TICKET_TTL_MS = 60_000;

export async function issueTicket(
  db: D1Database,
  request: { tenantId: string; conversationId: string; now?: number; keyHash?: string | null },
): Promise<{ ticket: string; expiresAt: string }> {
  const { tenantId, conversationId, now = Date.now(), keyHash = null } = request;
  const ticket = `wst_${randomToken(24)}`;
  const expiresAt = now + TICKET_TTL_MS;
  await db
    .prepare(
      `INSERT INTO ws_tickets (ticket_hash, tenant_id, conversation_id, expires_at, key_hash) VALUES (?, ?, ?, ?, ?)`,
    )
    .bind(await sha256Hex(ticket), tenantId, conversationId, expiresAt, keyHash)
    .run();
  return { ticket, expiresAt: new Date(expiresAt).toISOString() };
}

/** The ticket's tenant, conversation and issuing key (hashed) if it is valid; it can never be used again either way. */
export async function consumeTicket(
  db: D1Database,
  ticket: string,
  now = Date.now(),
): Promise<{ tenantId: string; conversationId: string; keyHash: string | null } | null> {
  if (!/^wst_[A-Za-z0-9_-]{20,64}$/.test(ticket)) return null;
  const row = await db
    .prepare(
      `DELETE FROM ws_tickets WHERE ticket_hash = ? RETURNING tenant_id AS tenantId, conversation_id AS conversationId, expires_at AS expiresAt, key_hash AS keyHash`,
    )
    .bind(await sha256Hex(ticket))
    .first<{ tenantId: string; conversationId: string; expiresAt: number; keyHash: string | null }>();
  if (!row || row.expiresAt <= now) return null;
  return { tenantId: row.tenantId, conversationId: row.conversationId, keyHash: row.keyHash };
}

/** Housekeeping of the cron tick (every 5 minutes): expired tickets that were never used. */
export async function sweepExpiredTickets(db: D1Database, now = Date.now()): Promise<number> {
  const res = await db.prepare(`DELETE FROM ws_tickets WHERE expires_at <= ?`).bind(now).run();
  return res.meta.changes ?? 0;
}
