// CortexDO: one shard of the cortex, a SQLite-backed Durable Object holding the search index of
// the tenant(s) the routing table sends to it (services/cortex/routing.ts; today one per tenant).
// It creates and migrates its own schema on first use and runs services/cortex.ts's functions
// unchanged through a D1-shaped adapter, so the ranking is the one the D1 cortex had. Every
// method takes the caller's tenant and every statement filters by it, so even a shard shared by
// several tenants never answers one tenant with another's rows.
import { DurableObject } from "cloudflare:workers";
import {
  conversationOfMessage,
  countIndexedPages,
  deleteDocs,
  pageRefPattern,
  searchCortexPage,
  upsertDocs,
  type CortexDoc,
  type DocKind,
  type SearchCursor,
  type SearchHit,
  type SearchOptions,
} from "../../services/cortex";
import { ensureCortexSchema } from "../../services/cortex/schema";
import { d1OverDurableSql } from "../../services/cortex/sql-adapter";
import { importLegacyRows, type LegacyCortexRow } from "../../services/cortex/legacy-rows";
import { deleteRowsInChunks } from "../../services/purge";
import { cortexFusionFor } from "../../services/semantic/select";
import { forgetDeletedVectors, syncShardVectors } from "../../services/semantic/shard-vectors";

export class CortexDO extends DurableObject<Env> {
  private readonly db: D1Database;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ensureCortexSchema(ctx.storage);
    this.db = d1OverDurableSql(ctx.storage);
  }

  async index(tenantId: string, docs: CortexDoc[]): Promise<void> {
    await upsertDocs(
      this.db,
      docs.filter((d) => d.tenantId === tenantId),
    );
  }

  /** The index outbox's vector step (services/semantic/outbox.ts); true when documents are left for another run. */
  async syncVectors(tenantId: string): Promise<boolean> {
    return syncShardVectors(this.env, this.db, tenantId);
  }

  async search(
    tenantId: string,
    q: string,
    opts: SearchOptions & { cursor?: SearchCursor },
  ): Promise<{ hits: SearchHit[]; next: SearchCursor | null }> {
    // The semantic path, when this deployment has one (services/semantic/select.ts), fuses in here.
    return searchCortexPage(this.db, tenantId, q, { ...opts, fusion: cortexFusionFor(this.env, this.db) });
  }

  async conversationOfMessage(tenantId: string, messageId: string): Promise<string | null> {
    return conversationOfMessage(this.db, tenantId, messageId);
  }

  async countIndexedPages(tenantId: string, attachmentId: string): Promise<number> {
    return countIndexedPages(this.db, tenantId, attachmentId);
  }

  async deleteDoc(tenantId: string, kind: DocKind, refId: string): Promise<void> {
    await deleteDocs(this.db, tenantId, kind, refId);
    await forgetDeletedVectors(this.env, this.db, tenantId);
  }

  /** An attachment's extracted pages; returns how many rows went. */
  async purgeAttachment(tenantId: string, attachmentId: string): Promise<number> {
    const n = await deleteRowsInChunks(this.db, "cortex_docs", "tenant_id = ? AND kind = 'page' AND ref_id LIKE ?", [
      tenantId,
      pageRefPattern(attachmentId),
    ]);
    await forgetDeletedVectors(this.env, this.db, tenantId);
    return n;
  }

  /** Every row of a conversation: its messages, episodes and its attachments' pages. */
  async purgeConversation(tenantId: string, conversationId: string): Promise<number> {
    const n = await deleteRowsInChunks(this.db, "cortex_docs", "tenant_id = ? AND conversation_id = ?", [
      tenantId,
      conversationId,
    ]);
    await forgetDeletedVectors(this.env, this.db, tenantId);
    return n;
  }

  /** Rows moved from the D1 cortex, their doc ids kept, so a repeated move changes nothing. */
  async importLegacy(tenantId: string, rows: LegacyCortexRow[]): Promise<number> {
    return importLegacyRows(this.db, tenantId, rows);
  }

  /** How many rows (chunks) of the tenant this shard holds: the migration's and the tests' check. */
  async countDocs(tenantId: string): Promise<number> {
    return (
      (await this.db
        .prepare(`SELECT COUNT(*) AS n FROM cortex_docs WHERE tenant_id = ?`)
        .bind(tenantId)
        .first<number>("n")) ?? 0
    );
  }
}
