// Shared by the hostile-input suites: one tenant that owns one resource of every kind, the route
// table the fuzzers walk (checked against the routes the Hono app registers), and a snapshot of
// everything stored, to prove that refused requests wrote nothing.
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import { sha256Hex, sortableId } from "../../core/ids";
import { app } from "../../workers/chat/app";
import { api, eventually, newTenant } from "./helpers";
import { shardRows } from "./cortex-rows";
import type { Method } from "../route-types";

export interface Owned {
  key: string;
  /** The id of `key` (its first key). */
  keyId: string;
  tenantId: string;
  conv: string;
  msg: string;
  att: string;
  upload: string;
  mem: string;
  epi: string;
  auto: string;
  proj: string;
  /** A file of the project. */
  file: string;
  /** An open multipart upload of a project file. */
  fileUpload: string;
  channel: string;
  channelConv: string;
  date: string;
  /** A model of the catalog (the same for every tenant: the catalog is not a tenant's). */
  model: string;
  /** A finished tenant-wide export. */
  exp: string;
  /** A registered MCP server, and the name the model sees for one of its tools. */
  mcp: string;
  mcpTool: string;
  /** A registered HTTP tool (with a secret header), and its name. */
  tool: string;
  toolName: string;
}

const ok = <R extends { status: number; text: string }>(r: R, what: string): R => {
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
};

/** A tenant with one of everything: a conversation with a turn, attachments, notes, an episode, an automation, a channel, a project. */
export async function ownEverything(label: string): Promise<Owned> {
  const key = await newTenant();
  const { tenantId, keyId } = (await env.DB.prepare(
    `SELECT tenant_id AS tenantId, id AS keyId FROM api_keys WHERE key_hash = ?`,
  )
    .bind(await sha256Hex(key))
    .first<{ tenantId: string; keyId: string }>())!;
  const conv = ok(await api("POST", "/v1/conversations", { title: `${label} secrets` }, { key }), "conversation").json
    .id;
  const turn = ok(
    await api(
      "POST",
      `/v1/conversations/${conv}/messages`,
      { content: `${label} private words quasar-${label}` },
      { key },
    ),
    "turn",
  );
  const msg = turn.json.messages[0].id;
  const att = ok(
    await api(
      "POST",
      `/v1/conversations/${conv}/attachments?name=${label}.txt`,
      `line one ${label}-attachment-secret\nline two\n`,
      { key, raw: true, headers: { "content-type": "text/plain" } },
    ),
    "attachment",
  ).json.id;
  const upload = ok(
    await api("POST", `/v1/conversations/${conv}/attachments/uploads`, { name: `${label}-big.bin` }, { key }),
    "multipart",
  ).json.attachmentId;
  const mem = ok(await api("POST", "/v1/memory", { text: `${label} note nebula-${label}` }, { key }), "note").json.id;
  // A fresh id each time: the workers files share their D1 (test/workers/project.ts).
  const epi = sortableId("epi");
  await env.DB.prepare(
    `INSERT INTO memory_episodes (id, tenant_id, conversation_id, fold_job_id, day, through_seq, body, created_at) VALUES (?, ?, ?, ?, '2025-01-01', 2, ?, '2025-01-01T00:00:00Z')`,
  )
    .bind(epi, tenantId, conv, `job-${epi}`, `${label} episode body`)
    .run();
  const channel = `${label}-inbox`;
  const channelConv = ok(
    await api("POST", `/v1/channels/${channel}/messages`, { content: `${label} channel words` }, { key }),
    "channel",
  ).json.conversationId;
  const auto = ok(
    await api(
      "POST",
      "/v1/automations",
      { name: `${label} daily`, schedule: "@daily", prompt: "summarize", channel, paused: true },
      { key },
    ),
    "automation",
  ).json.id;
  const proj = ok(await api("POST", "/v1/projects", { name: `${label} project` }, { key }), "project").json.id;
  const file = ok(
    await api("POST", `/v1/projects/${proj}/files?name=${label}-spec.txt`, `${label} project file`, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    }),
    "project file",
  ).json.id;
  const fileUpload = ok(
    await api("POST", `/v1/projects/${proj}/files/uploads`, { name: `${label}-big-spec.bin` }, { key }),
    "project multipart",
  ).json.fileId;
  const date = new Date().toISOString().slice(0, 10);
  const exp = ok(await api("POST", "/v1/exports", undefined, { key }), "export").json.id;
  const toolName = `${label}_tool_lookup`;
  const tool = ok(
    await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: toolName,
        description: `${label} tool finds records.`,
        inputSchema: { type: "object" },
        endpoint: `${inject("httpToolServer")}/echo?key=${label}-tool`,
        headers: { Authorization: `Bearer ${label}-tool-secret-token` },
      },
      { key },
    ),
    "tool",
  ).json.id;
  // Background indexing of the turns must be done before anyone snapshots the store.
  await eventually(
    async () => (await api("GET", `/v1/search?q=quasar-${label}`, undefined, { key })).json.data.length > 0,
  );
  // So does the export job (a queue consumer writing to R2).
  await eventually(
    async () => (await api("GET", `/v1/exports/${exp}`, undefined, { key })).json.status === "done",
    20_000,
  );
  const mcp = ok(
    await api(
      "POST",
      "/v1/mcp-servers",
      { name: `${label}-tools`, url: `http://127.0.0.1:${inject("mcpFixturePort")}/mcp` },
      { key },
    ),
    "MCP server",
  ).json.id;
  // The tenant's cortex shard is assigned at its first index write, which the turn above left to
  // the conversation's outbox: wait for it, so no later test sees it land in the routing table.
  await eventually(async () =>
    (
      await shardRows(
        `SELECT 1 FROM cortex_docs WHERE tenant_id = ? AND conversation_id = ? LIMIT 1`,
        [tenantId, conv],
        tenantId,
      )
    ).length
      ? true
      : null,
  );
  return {
    key,
    keyId,
    tenantId,
    conv,
    msg,
    att,
    upload,
    mem,
    epi,
    auto,
    proj,
    file,
    fileUpload,
    channel,
    channelConv,
    date,
    model: "claude-sonnet-5-5",
    exp,
    mcp,
    mcpTool: `mcp__${label}-tools__add`,
    tool,
    toolName,
  };
}

// ---- the route table ------------------------------------------------------------------------

export type BodyKind = "none" | "json" | "raw";
export interface RouteSpec {
  method: Method;
  path: string;
  body: BodyKind;
  /** A valid body (json routes); fuzzing mutates it. */
  sample?: unknown;
  /** A valid query string, for routes that take one; fuzzing mutates it. */
  query?: Record<string, string>;
  admin?: boolean;
  /** Opens a websocket (GET with an upgrade). */
  ws?: boolean;
}

const turn = { content: "hello" };
export const ROUTES: RouteSpec[] = [
  { method: "POST", path: "/v1/admin/tenants", body: "json", sample: { name: "fuzz" }, admin: true },
  {
    method: "POST",
    path: "/v1/admin/tenants/:tenant/keys",
    body: "json",
    sample: { name: "fuzz", expiresAt: "2999-01-01T00:00:00Z" },
    admin: true,
  },
  { method: "GET", path: "/v1/admin/tenants/:tenant/keys", body: "none", query: { limit: "5" }, admin: true },
  { method: "DELETE", path: "/v1/admin/tenants/:tenant/keys/:keyId", body: "none", admin: true },
  { method: "GET", path: "/v1/admin/cortex/shards", body: "none", admin: true },
  {
    method: "POST",
    path: "/v1/admin/cortex/tenants/:tenant/move",
    body: "json",
    sample: { to: "CORTEX_SHARD_1", limit: 10 },
    admin: true,
  },
  { method: "POST", path: "/v1/keys", body: "json", sample: { name: "fuzz", expiresAt: "2999-01-01T00:00:00Z" } },
  { method: "GET", path: "/v1/keys", body: "none", query: { limit: "5" } },
  { method: "DELETE", path: "/v1/keys/:keyId", body: "none" },
  { method: "POST", path: "/v1/conversations", body: "json", sample: { title: "t", settings: { tailMessages: 8 } } },
  { method: "GET", path: "/v1/conversations", body: "none", query: { limit: "5" } },
  // A streamed transcript (JSON or JSONL), not a validated JSON body: fuzzed as raw bytes.
  { method: "POST", path: "/v1/conversations/import", body: "raw", query: { title: "t" } },
  { method: "GET", path: "/v1/conversations/:id", body: "none" },
  {
    method: "PATCH",
    path: "/v1/conversations/:id",
    body: "json",
    sample: { title: "t", settings: { tailMessages: 8 } },
  },
  { method: "DELETE", path: "/v1/conversations/:id", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/messages", body: "none", query: { after: "0", limit: "5" } },
  { method: "POST", path: "/v1/conversations/:id/messages", body: "json", sample: turn },
  {
    method: "POST",
    path: "/v1/conversations/:id/tool-results",
    body: "json",
    sample: { results: [{ tool_use_id: "toolu_fuzz", content: "r" }] },
  },
  { method: "POST", path: "/v1/conversations/:id/stop", body: "json", sample: {} },
  {
    method: "POST",
    path: "/v1/conversations/:id/import",
    body: "json",
    sample: {
      messages: [
        { role: "user", text: "hi" },
        { role: "assistant", text: "hello" },
      ],
    },
  },
  { method: "GET", path: "/v1/conversations/:id/export", body: "none", query: { format: "jsonl" } },
  { method: "GET", path: "/v1/conversations/:id/replay", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/timeline", body: "none", query: { after: "0", limit: "5" } },
  { method: "GET", path: "/v1/conversations/:id/prompts", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/prompts/:snapshot", body: "none" },
  { method: "POST", path: "/v1/conversations/:id/ws-ticket", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/ws", body: "none", ws: true },
  { method: "POST", path: "/v1/conversations/:id/attachments", body: "raw", query: { name: "f.txt" } },
  { method: "GET", path: "/v1/conversations/:id/attachments", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/attachments/:attachmentId", body: "none" },
  { method: "GET", path: "/v1/conversations/:id/attachments/:attachmentId/content", body: "none" },
  { method: "DELETE", path: "/v1/conversations/:id/attachments/:attachmentId", body: "none" },
  {
    method: "POST",
    path: "/v1/conversations/:id/attachments/uploads",
    body: "json",
    sample: { name: "big.bin", type: "application/octet-stream" },
  },
  { method: "PUT", path: "/v1/conversations/:id/attachments/uploads/:attachmentId/parts/:part", body: "raw" },
  {
    method: "POST",
    path: "/v1/conversations/:id/attachments/uploads/:attachmentId/complete",
    body: "json",
    sample: { parts: [{ partNumber: 1, etag: "e" }] },
  },
  { method: "DELETE", path: "/v1/conversations/:id/attachments/uploads/:attachmentId", body: "none" },
  { method: "GET", path: "/v1/search", body: "none", query: { q: "hello", limit: "5" } },
  { method: "POST", path: "/v1/memory", body: "json", sample: { text: "n", title: "t", tags: ["x"] } },
  { method: "GET", path: "/v1/memory", body: "none", query: { limit: "5" } },
  { method: "GET", path: "/v1/memory/episodes", body: "none", query: { limit: "5" } },
  { method: "GET", path: "/v1/memory/episodes/:id", body: "none" },
  { method: "GET", path: "/v1/memory/:id", body: "none" },
  { method: "PATCH", path: "/v1/memory/:id", body: "json", sample: { text: "n" } },
  { method: "DELETE", path: "/v1/memory/:id", body: "none" },
  { method: "GET", path: "/v1/channels", body: "none" },
  { method: "GET", path: "/v1/channels/:name", body: "none" },
  { method: "PATCH", path: "/v1/channels/:name", body: "json", sample: { rotationSeconds: 60 } },
  { method: "POST", path: "/v1/channels/:name/messages", body: "json", sample: turn },
  { method: "DELETE", path: "/v1/channels/:name", body: "none" },
  {
    method: "POST",
    path: "/v1/automations",
    body: "json",
    sample: { name: "n", schedule: "@daily", prompt: "p", channel: "c", paused: true },
  },
  { method: "GET", path: "/v1/automations", body: "none", query: { limit: "5" } },
  { method: "GET", path: "/v1/automations/:id", body: "none" },
  { method: "PATCH", path: "/v1/automations/:id", body: "json", sample: { paused: true } },
  { method: "POST", path: "/v1/automations/:id/pause", body: "none" },
  { method: "POST", path: "/v1/automations/:id/resume", body: "none" },
  { method: "DELETE", path: "/v1/automations/:id", body: "none" },
  { method: "GET", path: "/v1/automations/:id/runs", body: "none", query: { limit: "5" } },
  { method: "POST", path: "/v1/projects", body: "json", sample: { name: "p" } },
  { method: "GET", path: "/v1/projects", body: "none" },
  { method: "GET", path: "/v1/projects/:id", body: "none" },
  { method: "PATCH", path: "/v1/projects/:id", body: "json", sample: { name: "p2" } },
  { method: "DELETE", path: "/v1/projects/:id", body: "none" },
  { method: "GET", path: "/v1/projects/:id/files", body: "none" },
  { method: "POST", path: "/v1/projects/:id/files", body: "raw", query: { name: "f.txt" } },
  { method: "DELETE", path: "/v1/projects/:id/files/:fileId", body: "none" },
  {
    method: "POST",
    path: "/v1/projects/:id/files/uploads",
    body: "json",
    sample: { name: "big.bin", type: "application/octet-stream" },
  },
  { method: "PUT", path: "/v1/projects/:id/files/uploads/:fileId/parts/:part", body: "raw" },
  {
    method: "POST",
    path: "/v1/projects/:id/files/uploads/:fileId/complete",
    body: "json",
    sample: { parts: [{ partNumber: 1, etag: "e" }] },
  },
  { method: "DELETE", path: "/v1/projects/:id/files/uploads/:fileId", body: "none" },
  { method: "GET", path: "/v1/corpus/:date", body: "none" },
  { method: "POST", path: "/v1/exports", body: "none" },
  { method: "GET", path: "/v1/exports/:id", body: "none" },
  { method: "DELETE", path: "/v1/exports/:id", body: "none" },
  { method: "GET", path: "/v1/exports/:id/download", body: "none" },
  // An unreachable loopback port: registering answers 201 with the listing's error, calling nothing.
  {
    method: "POST",
    path: "/v1/mcp-servers",
    body: "json",
    sample: { name: "fuzz", url: "http://127.0.0.1:9/mcp", auth: { name: "x-api-key", value: "k" }, timeoutMs: 1000 },
  },
  { method: "GET", path: "/v1/mcp-servers", body: "none", query: { limit: "5" } },
  { method: "GET", path: "/v1/mcp-servers/:id", body: "none" },
  { method: "PATCH", path: "/v1/mcp-servers/:id", body: "json", sample: { timeoutMs: 5000 } },
  { method: "DELETE", path: "/v1/mcp-servers/:id", body: "none" },
  { method: "POST", path: "/v1/mcp-servers/:id/refresh", body: "none" },
  {
    method: "POST",
    path: "/v1/tools",
    body: "json",
    sample: {
      kind: "http",
      name: "fuzz_tool",
      description: "d",
      inputSchema: { type: "object" },
      endpoint: "https://example.com/hook",
    },
  },
  { method: "GET", path: "/v1/tools", body: "none", query: { limit: "5" } },
  { method: "GET", path: "/v1/tools/:id", body: "none" },
  { method: "PATCH", path: "/v1/tools/:id", body: "json", sample: { description: "d" } },
  { method: "DELETE", path: "/v1/tools/:id", body: "none" },
  { method: "GET", path: "/v1/models", body: "none", query: { status: "active" } },
  { method: "GET", path: "/v1/models/:id", body: "none" },
  { method: "GET", path: "/v1/usage", body: "none", query: { from: "2026-01-01", to: "2026-01-31" } },
  { method: "GET", path: "/v1/settings", body: "none" },
  { method: "PUT", path: "/v1/settings", body: "json", sample: { settings: { tailMessages: 8 } } },
];

/** Every handler route the app registers (middleware excluded), as "METHOD /path". */
export function registeredRoutes(): string[] {
  const seen = new Set<string>();
  for (const r of app.routes) if (r.method !== "ALL") seen.add(`${r.method} ${r.path.replace(/\/$/, "") || "/"}`);
  return [...seen].sort();
}

/** Routes that take no input at all, so there is nothing to fuzz but the method. */
export const INPUTLESS = ["GET /health", "GET /openapi.json"];

/** The kind of resource a path parameter names, from its position. */
export function paramKind(path: string, param: string): keyof Owned | "part" | "snapshot" {
  if (param === "attachmentId") return path.includes("/uploads/") ? "upload" : "att";
  if (param === "fileId") return path.includes("/uploads/") ? "fileUpload" : "file";
  if (param === "part") return "part";
  if (param === "snapshot") return "snapshot";
  if (param === "name") return "channel";
  if (param === "date") return "date";
  if (param === "tenant") return "tenantId";
  if (param === "keyId") return "keyId";
  if (path.startsWith("/v1/conversations/")) return "conv";
  if (path.startsWith("/v1/memory/episodes/")) return "epi";
  if (path.startsWith("/v1/memory/")) return "mem";
  if (path.startsWith("/v1/automations/")) return "auto";
  if (path.startsWith("/v1/projects/")) return "proj";
  if (path.startsWith("/v1/exports/")) return "exp";
  if (path.startsWith("/v1/mcp-servers/")) return "mcp";
  if (path.startsWith("/v1/tools/")) return "tool";
  if (path.startsWith("/v1/models/")) return "model";
  throw new Error(`no kind for ${param} in ${path}`);
}

export const paramsOf = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);

/** The path with every parameter filled from `owner`, except those given in `override` (raw, already encoded). */
export function fillPath(path: string, owner: Owned, override: Record<string, string> = {}): string {
  return path.replace(/:(\w+)/g, (_, p: string) => {
    if (p in override) return override[p];
    const kind = paramKind(path, p);
    if (kind === "part" || kind === "snapshot") return "1";
    return encodeURIComponent(String(owner[kind]));
  });
}

// ---- "nothing written" ----------------------------------------------------------------------

/** Every D1 row (the legacy cortex through its content table), the dev tenant's cortex shard, every R2 key with its etag. */
export async function storeSnapshot(): Promise<{ d1: Record<string, string>; r2: string[] }> {
  const tables = await env.DB.prepare(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%' AND name NOT LIKE 'cortex_fts%' ORDER BY name`,
  ).all<{ name: string }>();
  const d1: Record<string, string> = {};
  for (const { name } of tables.results) {
    const rows = await env.DB.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
    d1[name] = `${rows.results.length}:${await digest(JSON.stringify(rows.results))}`;
  }
  const shard = await shardRows(`SELECT * FROM cortex_docs WHERE tenant_id = ? ORDER BY rowid`, ["dev"]);
  d1["cortex shard of dev"] = `${shard.length}:${await digest(JSON.stringify(shard))}`;
  const r2: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.BUCKET.list({ cursor, limit: 1000 });
    for (const o of page.objects) r2.push(`${o.key} ${o.etag}`);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return { d1, r2 };
}

async function digest(s: string): Promise<string> {
  const h = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s));
  return [...new Uint8Array(h)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 16);
}

/** What a conversation holds, as its owner sees it. */
export async function conversationState(owner: Owned, id: string) {
  const meta = (await api("GET", `/v1/conversations/${id}`, undefined, { key: owner.key })).json;
  return {
    messageCount: meta.messageCount,
    lastSeq: meta.lastSeq,
    title: meta.title,
    updatedAt: meta.updatedAt,
    settings: meta.settings,
  };
}

/** A websocket through the worker's fetch handler. */
