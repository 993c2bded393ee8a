// Listing a server's tools through the SDK and caching the list in D1 (registration, refresh, and
// a tools/list_changed heard during a call). Names are mapped once here (core/mcp-names.ts) and
// the mapping is stored with each tool, so a call always reaches the tool it was listed as.
import { mcpToolName } from "../../core/mcp-names";
import { wellFormedDeep } from "../../core/text-cut";
import { scrub, withheldAndCut } from "../tools/http-call";
import { open } from "../tools/secret-box";
import { authHeaders, connectMcp, message, withTimeout, type McpConnection, type McpEndpoint } from "./connect";
import {
  getMcpServer,
  MAX_STORED_TOOLS_BYTES,
  saveMcpListing,
  type McpListing,
  type McpServerRow,
  type McpToolEntry,
} from "./servers";

/** A server may offer many tools; past this the rest are left out (and the error says so). */
export const MAX_TOOLS_PER_SERVER = 500;
const MAX_DESCRIPTION = 1_000;
/** Pages of a tool list read at most (with MAX_TOOLS_PER_SERVER, a bound on a listing's work). */
export const MAX_LIST_PAGES = 50;
/** The longest MCP tool name kept: what the MCP spec recommends as a tool name's limit. */
export const MAX_MCP_NAME = 128;
/** Tools left out for a repeated name that toolsError names (the count says how many in all). */
const MAX_NAMES_SHOWN = 5;
/** Whether a request can carry an MCP tool's own name (it rides the tool's description and the prompt's index line). */
export const carriableMcpName = (name: string): boolean => name.length <= MAX_MCP_NAME && name.isWellFormed();

export const authOwner = (row: Pick<McpServerRow, "tenantId" | "id">) => `${row.tenantId}:${row.id}:mcp-auth`;

export async function endpointOf(env: Env, row: McpServerRow): Promise<McpEndpoint> {
  return {
    url: row.url,
    auth: row.authSealed
      ? (JSON.parse(await open(env, authOwner(row), row.authSealed)) as { name: string; value: string })
      : null,
  };
}

/**
 * The server's tools, page by page, all within one `timeoutMs`. A page cursor seen before ends
 * the list (a server repeating it would be listed for ever), as do MAX_LIST_PAGES pages and
 * MAX_TOOLS_PER_SERVER tools, and so does the first tool that would take the list past
 * MAX_STORED_TOOLS_BYTES as stored (the list is not read on into memory; the tools before it are
 * kept, a list saveMcpListing stores). A tool whose name no request could carry (over MAX_MCP_NAME
 * characters, or not well-formed Unicode: every later request would fail) is left out, and a
 * description is cut and made well-formed. The connection's auth header is withheld from every
 * description and schema (before any cut), and a tool whose name holds it is left out: the list
 * is shown to every key of the tenant and to the model. A tool whose mapped name a tool before it
 * has is left out too, named. `note` says what was left out, or is null.
 */
export async function listWith(
  conn: McpConnection,
  server: string,
  timeoutMs: number,
): Promise<{ tools: McpToolEntry[]; note: string | null }> {
  const tools: McpToolEntry[] = [];
  const seen = new Set<string>();
  const cursors = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  let badNames = 0;
  let secretNames = 0;
  let nameless = 0;
  /** The server's names of the tools left out for a mapped name a tool before them has. */
  const repeated: string[] = [];
  let cursor: string | undefined;
  let cut: string | null = null;
  /** The bytes of `tools` as saveMcpListing stores them (JSON, one comma between two tools). */
  let bytes = 2;
  const encoder = new TextEncoder();
  for (let pages = 0; ; pages++) {
    if (pages >= MAX_LIST_PAGES) {
      cut = `only the first ${MAX_LIST_PAGES} pages of tools are listed`;
      break;
    }
    const left = Math.max(1, deadline - Date.now());
    const page = await withTimeout(
      conn.guard(conn.client.listTools(cursor ? { cursor } : {}, { timeout: left })),
      left,
      "listing tools",
    );
    if (!Array.isArray(page.tools)) throw new Error("the server's tools/list answer holds no list of tools");
    // Each tool is judged by itself: one the list cannot hold is left out (the note says so), and
    // its schema, whatever it is, is kept as published (modelToolSchema offers an odd one without
    // arguments, saying why).
    for (const t of page.tools as unknown[]) {
      const tool = readTool(t);
      if (!tool) {
        nameless++;
        continue;
      }
      if (!carriableMcpName(tool.name)) {
        badNames++;
        continue;
      }
      // Its name cannot be withheld: a call must name the tool as the server listed it.
      if (scrub(tool.name, conn.secret) !== tool.name) {
        secretNames++;
        continue;
      }
      const name = await mcpToolName(server, tool.name);
      if (seen.has(name)) {
        repeated.push(tool.name);
        continue;
      }
      seen.add(name);
      const entry: McpToolEntry = {
        name,
        mcpName: tool.name,
        description: withheldAndCut(tool.description, conn.secret, MAX_DESCRIPTION),
        inputSchema: withheldIn(tool.inputSchema, conn.secret),
      };
      const size = encoder.encode(JSON.stringify(entry)).byteLength + (tools.length ? 1 : 0);
      if (bytes + size > MAX_STORED_TOOLS_BYTES) {
        cut = `the tool list was read no further than page ${pages + 1}, where it passed the ${MAX_STORED_TOOLS_BYTES} bytes one server's list may take; the ${tools.length} tool${tools.length === 1 ? "" : "s"} before that ${tools.length === 1 ? "is" : "are"} listed`;
        break;
      }
      tools.push(entry);
      bytes += size;
      if (tools.length >= MAX_TOOLS_PER_SERVER) {
        cut = `only the first ${MAX_TOOLS_PER_SERVER} tools are listed`;
        break;
      }
    }
    if (cut) break;
    cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    if (!cursor) break;
    if (cursors.has(cursor)) {
      cut = "the server repeated a page of its tool list; the list stops there";
      break;
    }
    cursors.add(cursor);
  }
  const left = (n: number, why: string) => (n ? `${n} tool${n === 1 ? "" : "s"} left out: ${why}` : null);
  const notes = [
    cut,
    left(nameless, "not a tool with a name"),
    left(badNames, `a name longer than ${MAX_MCP_NAME} characters or not valid Unicode`),
    left(secretNames, "a name holding the server's auth header"),
    left(repeated.length, `the name of a tool listed before it (${namesOf(repeated)})`),
  ];
  return { tools, note: notes.filter(Boolean).join("; ") || null };
}

/** The first few names (each carriable, so short and withheld-checked), joined; "…" for the rest. */
function namesOf(names: string[]): string {
  const unique = [...new Set(names)];
  return `${unique.slice(0, MAX_NAMES_SHOWN).join(", ")}${unique.length > MAX_NAMES_SHOWN ? ", …" : ""}`;
}

/** A listed tool's name, description (or title, or name) and schema; null when it has no name. */
function readTool(t: unknown): { name: string; description: string; inputSchema: unknown } | null {
  if (!t || typeof t !== "object" || Array.isArray(t)) return null;
  const { name, description, title, inputSchema } = t as Record<string, unknown>;
  if (typeof name !== "string" || !name) return null;
  const text = [description, title].find((v): v is string => typeof v === "string") ?? name;
  return { name, description: text, inputSchema };
}

/**
 * A JSON value with the secrets withheld from every string in it, keys included, and each string
 * well-formed (a server's lone surrogate would make every request carrying the schema a 400).
 */
function withheldIn(value: unknown, secret: Record<string, string>): unknown {
  if (!Object.keys(secret).length) return wellFormedDeep(value);
  if (typeof value === "string") return scrub(value, secret).toWellFormed();
  if (Array.isArray(value)) return value.map((v) => withheldIn(v, secret));
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [scrub(k, secret).toWellFormed(), withheldIn(v, secret)]),
    );
  return value;
}

/**
 * Connects, lists and stores the result (or the error, keeping the last good list), and answers
 * the server as it is then. A listing taken under a name, url or auth the server no longer has is
 * not stored (servers.ts): the answer is the server as the change that outdated it left it. A
 * write D1 refuses never throws: the server stays registered, the failure its toolsError.
 */
export async function refreshListing(env: Env, row: McpServerRow): Promise<McpServerRow> {
  const listedAt = new Date().toISOString();
  let listing: McpListing;
  let secret: Record<string, string> = {};
  try {
    const endpoint = await endpointOf(env, row);
    secret = authHeaders(endpoint);
    // One timeoutMs in all: connecting and listing share the deadline, the list gets what is left.
    const deadline = Date.now() + row.timeoutMs;
    const conn = await connectMcp(env, endpoint, { timeoutMs: row.timeoutMs, deadline });
    try {
      const { tools, note } = await listWith(conn, row.name, Math.max(1, deadline - Date.now()));
      listing = { transport: conn.transport, tools, listedAt, error: note };
    } finally {
      await conn.close();
    }
  } catch (err) {
    // The error is shown to any key of the tenant: never with the server's auth header in it.
    listing = { transport: null, tools: [], listedAt, error: message(err, secret) };
  }
  const save = (l: McpListing) =>
    saveMcpListing(env.DB, { tenantId: row.tenantId, id: row.id, listing: l, listedAs: row });
  try {
    return (await save(listing)) ?? (await getMcpServer(env.DB, row.tenantId, row.id)) ?? row;
  } catch (err) {
    // A registration answered with a 500 would leave a server its caller thinks was never made.
    const error = `the tool list could not be stored: ${message(err, secret)}`;
    console.error(`MCP server ${row.id}: ${error}`);
    const failed: McpListing = { transport: null, tools: [], listedAt, error };
    return (await save(failed).catch(() => null)) ?? { ...row, toolsListedAt: listedAt, toolsError: error };
  }
}
