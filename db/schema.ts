// drizzle-orm table definitions for the D1 tables whose rows the app maps to objects (tenants, keys,
// conversations and their create keys, memory, automations, attachments, projects, tenant tools,
// MCP servers, export jobs). Tables only ever touched by raw SQL
// are not declared here (ws_tickets, channels, memory_maps, corpus_days, the cortex and its FTS5
// index): a declaration nothing uses can only drift. test/workers/db-schema.test.ts checks every
// table declared here against the database all migrations build.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  createdAt: text("created_at").notNull(),
  /** Settings every new conversation of the tenant starts with (a JSON settings patch). */
  settings: text("settings").notNull().default("{}"),
  /**
   * Moved on by every write of the tenant's settings: a project's settings write lands only while it
   * is what was read before the write's check (services/default-settings.ts).
   */
  settingsVersion: integer("settings_version").notNull().default(0),
  /**
   * Moved on by every write of a project's settings (never settingsVersion, so projects written at
   * once never refuse each other): the tenant's settings write lands only while both are what was
   * read before its check.
   */
  projectSettingsVersion: integer("project_settings_version").notNull().default(0),
});

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id),
  keyHash: text("key_hash").notNull().unique(),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
  name: text("name"),
  last4: text("last4"),
  expiresAt: text("expires_at"),
});

export const conversations = sqliteTable("conversations", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id),
  title: text("title").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  messageCount: integer("message_count").notNull().default(0),
});

/**
 * The `Idempotency-Key` of a conversation create: per tenant, the request's fingerprint and the
 * conversation it made; a row older than IDEMPOTENCY_TTL_MS counts as absent (services/conversation-list.ts).
 */
export const conversationCreateKeys = sqliteTable(
  "conversation_create_keys",
  {
    tenantId: text("tenant_id").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    conversationId: text("conversation_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] })],
);

export const memoryNotes = sqliteTable("memory_notes", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id),
  title: text("title").notNull(),
  body: text("body").notNull(),
  tags: text("tags").notNull().default("[]"),
  sourceConversationId: text("source_conversation_id"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const memoryEpisodes = sqliteTable("memory_episodes", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id")
    .notNull()
    .references(() => tenants.id),
  conversationId: text("conversation_id").notNull(),
  foldJobId: text("fold_job_id").notNull().unique(),
  day: text("day").notNull(),
  throughSeq: integer("through_seq").notNull(),
  body: text("body").notNull(),
  createdAt: text("created_at").notNull(),
});

export const automations = sqliteTable("automations", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name").notNull(),
  schedule: text("schedule").notNull(),
  prompt: text("prompt").notNull(),
  channel: text("channel").notNull(),
  paused: integer("paused", { mode: "boolean" }).notNull().default(false),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  /** The first slot after the last tick that saw the row, as ISO; "" = due at the next tick. */
  nextRunAt: text("next_run_at").notNull().default(""),
  /** The region of the request that created it (core/location-hint.ts), for objects its runs create. */
  locationHint: text("location_hint"),
  /** The expiry of the key that created it or last changed its prompt or schedule; null: that key never expires. */
  expiresAt: text("expires_at"),
});

export const automationRuns = sqliteTable("automation_runs", {
  id: text("id").primaryKey(),
  automationId: text("automation_id").notNull(),
  tenantId: text("tenant_id").notNull(),
  slot: text("slot").notNull(),
  status: text("status").notNull(),
  conversationId: text("conversation_id"),
  queuedAt: text("queued_at").notNull(),
  startedAt: text("started_at"),
  finishedAt: text("finished_at"),
  usage: text("usage"),
  error: text("error"),
  attempts: integer("attempts").notNull().default(0),
  /** The stop_reason of the turn whose outcome the run recorded; null when none ended. */
  stopReason: text("stop_reason"),
  /** The turn keys' numbers (runTurnKey) `usage` counts, a JSON array: each turn is counted once. */
  usageTurns: text("usage_turns"),
  /** The prompt the run sends, stored by its first attempt that runs it; null until then. */
  prompt: text("prompt"),
  /** The highest turn key's number (runTurnKey) an attempt sent a turn under; 0: none yet. */
  turnKeysSent: integer("turn_keys_sent").notNull().default(0),
  /** The conversation the keys from turnKeysFrom to turnKeysSent went to; null: none sent (or sent before it was kept). */
  turnKeysConversationId: text("turn_keys_conversation_id"),
  /** The first key sent to turnKeysConversationId: keys below it went to an earlier conversation, never sent again. */
  turnKeysFrom: integer("turn_keys_from").notNull().default(1),
});

export const attachments = sqliteTable(
  "attachments",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    conversationId: text("conversation_id").notNull(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    size: integer("size").notNull().default(0),
    status: text("status").notNull(),
    r2Key: text("r2_key").notNull(),
    uploadId: text("upload_id"),
    facts: text("facts").notNull().default("{}"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    indexStatus: text("index_status").notNull().default("none"),
    indexStartedAt: text("index_started_at"),
    projectId: text("project_id"),
  },
  // The cron tick's sweeps (uploads never finished, deletes cut short) read rows by status and age
  // through it (d1-migrations/0031), not every tenant's attachments.
  (t) => [index("attachments_status").on(t.status, t.updatedAt)],
);

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  name: text("name").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  /** Settings every new conversation of the project starts with, over the tenant's (a JSON settings patch). */
  settings: text("settings").notNull().default("{}"),
});

/**
 * A tenant's remote MCP servers (tenant-wide, or one project's). `tools` caches the server's last
 * tool list as JSON (McpToolEntry[]), with when it was taken and the error of the last listing.
 */
export const mcpServers = sqliteTable("mcp_servers", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id"),
  name: text("name").notNull(),
  url: text("url").notNull(),
  authSealed: text("auth_sealed"),
  transport: text("transport"),
  timeoutMs: integer("timeout_ms").notNull().default(30000),
  tools: text("tools").notNull().default("[]"),
  toolsListedAt: text("tools_listed_at"),
  toolsError: text("tools_error"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** The cortex routing table: a tenant's D1 shard (a CORTEX_SHARD_n binding), a move in progress, its old object. */
export const cortexShards = sqliteTable("cortex_shards", {
  tenantId: text("tenant_id").primaryKey(),
  shard: text("shard"),
  movingTo: text("moving_to"),
  drainingFrom: text("draining_from"),
  objectShard: text("object_shard"),
  assignedAt: text("assigned_at").notNull(),
});
/** Tenant tools (HTTP endpoints, client tools); `sealedHeaders` is secret-box ciphertext, never returned. */
export const tools = sqliteTable("tools", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  projectId: text("project_id"),
  kind: text("kind").notNull(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  inputSchema: text("input_schema").notNull(),
  endpoint: text("endpoint"),
  headerNames: text("header_names").notNull().default("[]"),
  sealedHeaders: text("sealed_headers"),
  timeoutMs: integer("timeout_ms").notNull(),
  maxResponseBytes: integer("max_response_bytes").notNull(),
  idempotent: integer("idempotent", { mode: "boolean" }).notNull().default(false),
  retries: integer("retries").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/**
 * Model usage and its cost: a turn's (each resumed part of a paused turn its own row) or a fold's,
 * written once by id; `costMicroUsd` is null for a model the catalog does not price.
 */
export const usageEvents = sqliteTable(
  "usage_events",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    conversationId: text("conversation_id").notNull(),
    kind: text("kind").notNull(),
    day: text("day").notNull(),
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    cacheWriteTokens: integer("cache_write_tokens").notNull(),
    cacheReadTokens: integer("cache_read_tokens").notNull(),
    thinkingTokens: integer("thinking_tokens").notNull(),
    webSearchRequests: integer("web_search_requests").notNull(),
    webFetchRequests: integer("web_fetch_requests").notNull(),
    costMicroUsd: integer("cost_micro_usd"),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);

/** Tenant-wide export jobs; the export is one R2 object beside them (r2-layout exportDataKey). */
export const exportJobs = sqliteTable("export_jobs", {
  id: text("id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** queued | running | done | failed, or deleting while its object is removed (seen by nobody). */
  status: text("status").notNull(),
  format: text("format").notNull(),
  createdAt: text("created_at").notNull(),
  startedAt: text("started_at"),
  finishedAt: text("finished_at"),
  /** When the cron removes the job and its object. */
  expiresAt: text("expires_at").notNull(),
  conversations: integer("conversations").notNull().default(0),
  bytes: integer("bytes").notNull().default(0),
  error: text("error"),
});
