// The usage ledger in D1: a row per turn (each resumed part of a paused turn its own, and each
// model a refusal fallback brought in), per fold call (each delivery of a fold job its own) and
// per automatic title call, written once by id (a retried write changes nothing), summed for
// GET /v1/usage by UTC day range, per conversation and per model. A row holds counts and a cost, nothing of what was said: it stays
// when its conversation is deleted, so the tenant's totals for a past month never change.
import { and, eq, gte, lte, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { usageEvents } from "../db/schema";
import type { Usage } from "../core/types";

/** What spent the tokens: a turn (or a resumed part of one), a fold, or the automatic title's call. */
export type UsageKind = "turn" | "fold" | "title";

export interface UsageEvent {
  tenantId: string;
  /**
   * The row's identity: the turn's part (`turnId` or `turnId:step`, plus `:model` for the calls of a
   * refusal fallback's model), a fold job's delivery (`fold:<job>:<delivery count>:<call id>`: two
   * deliveries of one message both pay for a call) or `title:<conversation>`.
   */
  id: string;
  conversationId: string;
  kind: UsageKind;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  model: string;
  usage: Usage;
}

export async function recordUsage(db: D1Database, e: UsageEvent): Promise<void> {
  await usageInsert(drizzle(db), e);
}

/** The row's insert, for a caller that batches it with other writes (one D1 round trip). */
export function usageInsert(d: ReturnType<typeof drizzle>, e: UsageEvent) {
  const u = e.usage;
  return d
    .insert(usageEvents)
    .values({
      tenantId: e.tenantId,
      id: e.id,
      conversationId: e.conversationId,
      kind: e.kind,
      day: e.day,
      model: e.model,
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cacheWriteTokens: u.cache_creation_input_tokens,
      cacheReadTokens: u.cache_read_input_tokens,
      thinkingTokens: u.thinking_tokens ?? 0,
      webSearchRequests: u.web_search_requests ?? 0,
      webFetchRequests: u.web_fetch_requests ?? 0,
      costMicroUsd: u.cost_usd === undefined ? null : Math.round(u.cost_usd * 1_000_000),
    })
    .onConflictDoNothing();
}

export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  thinking_tokens: number;
  web_search_requests: number;
  web_fetch_requests: number;
  /** USD at the catalog's prices; rows (a turn part, a fold or title call) on models the catalog does not price are counted in `unpricedCalls`. */
  cost_usd: number;
  turns: number;
  folds: number;
  /** Automatic title calls (auto-title.ts), one at most per conversation. */
  titles: number;
  unpricedCalls: number;
}

const sums = {
  input_tokens: sql<number>`coalesce(sum(${usageEvents.inputTokens}), 0)`,
  output_tokens: sql<number>`coalesce(sum(${usageEvents.outputTokens}), 0)`,
  cache_creation_input_tokens: sql<number>`coalesce(sum(${usageEvents.cacheWriteTokens}), 0)`,
  cache_read_input_tokens: sql<number>`coalesce(sum(${usageEvents.cacheReadTokens}), 0)`,
  thinking_tokens: sql<number>`coalesce(sum(${usageEvents.thinkingTokens}), 0)`,
  web_search_requests: sql<number>`coalesce(sum(${usageEvents.webSearchRequests}), 0)`,
  web_fetch_requests: sql<number>`coalesce(sum(${usageEvents.webFetchRequests}), 0)`,
  costMicro: sql<number>`coalesce(sum(${usageEvents.costMicroUsd}), 0)`,
  // A turn's rows (its resumed parts `turnId:step`, a fallback model's `…:model`) share the turn id before the first ':'.
  turns: sql<number>`count(distinct case when ${usageEvents.kind} = 'turn' then substr(${usageEvents.id}, 1, instr(${usageEvents.id} || ':', ':') - 1) end)`,
  folds: sql<number>`sum(case when ${usageEvents.kind} = 'fold' then 1 else 0 end)`,
  titles: sql<number>`sum(case when ${usageEvents.kind} = 'title' then 1 else 0 end)`,
  unpricedCalls: sql<number>`sum(case when ${usageEvents.costMicroUsd} is null then 1 else 0 end)`,
};

function totals(row: Record<keyof typeof sums, number | null>): UsageTotals {
  const { costMicro, ...rest } = row;
  const n = (v: number | null) => Number(v ?? 0);
  return {
    input_tokens: n(rest.input_tokens),
    output_tokens: n(rest.output_tokens),
    cache_creation_input_tokens: n(rest.cache_creation_input_tokens),
    cache_read_input_tokens: n(rest.cache_read_input_tokens),
    thinking_tokens: n(rest.thinking_tokens),
    web_search_requests: n(rest.web_search_requests),
    web_fetch_requests: n(rest.web_fetch_requests),
    cost_usd: n(costMicro) / 1_000_000,
    turns: n(rest.turns),
    folds: n(rest.folds),
    titles: n(rest.titles),
    unpricedCalls: n(rest.unpricedCalls),
  };
}

export interface UsageReport {
  total: UsageTotals;
  conversations: ({ conversationId: string } & UsageTotals)[];
  models: ({ model: string } & UsageTotals)[];
  /** The cursor of the next page of `conversations`, or null when this page is the last. */
  next: string | null;
}

/** Where a page of the per-conversation list starts: after this cost (micro-USD) and conversation. */
export interface UsageCursor {
  costMicro: number;
  conversationId: string;
}

export const usageCursorText = (c: UsageCursor) => `${c.costMicro}.${c.conversationId}`;

export interface UsageQuery {
  tenantId: string;
  from: string;
  to: string;
  conversationId?: string;
  /** At most this many conversations (the most costly first), `next` paging on; unset: all of them. */
  limit?: number;
  after?: UsageCursor;
}

/** The tenant's usage from `from` to `to` (UTC days, both included), optionally one conversation's only. */
export async function usageReport(db: D1Database, q: UsageQuery): Promise<UsageReport> {
  const { tenantId, from, to, conversationId, limit, after } = q;
  const d = drizzle(db);
  const where = and(
    eq(usageEvents.tenantId, tenantId),
    gte(usageEvents.day, from),
    lte(usageEvents.day, to),
    conversationId ? eq(usageEvents.conversationId, conversationId) : undefined,
  );
  const [total, byConversation, byModel] = await Promise.all([
    d.select(sums).from(usageEvents).where(where),
    d
      .select({ conversationId: usageEvents.conversationId, ...sums })
      .from(usageEvents)
      .where(where)
      .groupBy(usageEvents.conversationId)
      // Keyset paging on the order itself: a conversation whose cost grows between two pages
      // (today's turns) may move across the cursor, as any live list's item may.
      .having(
        after
          ? sql`(${sums.costMicro} < ${after.costMicro} or (${sums.costMicro} = ${after.costMicro} and ${usageEvents.conversationId} > ${after.conversationId}))`
          : undefined,
      )
      .orderBy(sql`${sums.costMicro} desc`, usageEvents.conversationId)
      .limit(limit === undefined ? -1 : limit + 1),
    d
      .select({ model: usageEvents.model, ...sums })
      .from(usageEvents)
      .where(where)
      .groupBy(usageEvents.model)
      .orderBy(usageEvents.model),
  ]);
  const page = limit === undefined ? byConversation : byConversation.slice(0, limit);
  const last = page[page.length - 1];
  return {
    total: totals(total[0]),
    conversations: page.map(({ conversationId: id, ...row }) => ({ conversationId: id, ...totals(row) })),
    models: byModel.map(({ model, ...row }) => ({ model, ...totals(row) })),
    next:
      limit !== undefined && byConversation.length > limit
        ? usageCursorText({ costMicro: Number(last.costMicro ?? 0), conversationId: last.conversationId })
        : null,
  };
}
