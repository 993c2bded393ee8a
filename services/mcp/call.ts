// One call of a tenant's MCP tool: connect (the URL checked again), callTool through the SDK, map
// the result, all under the server's timeout: one deadline, timeoutMs from the start, that
// connecting, the call and a list refresh share, each step getting the time left (closing the
// session adds at most SESSION_END_MS). Every failure is an is_error result the model can
// read: an answer past the message cap (connect.ts) or a result whose text passes an HTTP tool's
// cap is one too, never kept in part. A tools/list_changed heard during the call refreshes the
// cached list at once.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { MCP_MAX_RESULT_TEXT_BYTES } from "../../core/tenant-tool-rules";
import { authHeaders, connectMcp, McpTimeout, message } from "./connect";
import { endpointOf, listWith } from "./listing";
import { scrub } from "../tools/http-call";
import { mcpResultOutput, type McpResultOutput } from "./results";
import { getMcpServer, saveMcpListing, type McpServerRow } from "./servers";

export async function callMcpTool(
  env: Env,
  {
    tenantId,
    serverId,
    mcpName,
    args,
    offered,
  }: {
    tenantId: string;
    serverId: string;
    mcpName: string;
    args: Record<string, unknown>;
    /**
     * The tool as the conversation was offered it: its name, its server's name then, and the
     * conversation's project (null: none), whose servers and the tenant-wide ones it sees.
     */
    offered?: { toolName: string; serverName: string; projectId: string | null };
  },
): Promise<McpResultOutput & { listChanged?: boolean }> {
  const row = await getMcpServer(env.DB, tenantId, serverId);
  // Renamed, or moved to another project, the server is not the one the conversation was offered:
  // its tools are no longer in scope under that name (as an HTTP tool's, agent/tools/registered-tools.ts).
  // Moved between tenant-wide and the conversation's own project, it is still in scope: the
  // conversation lists it either way (the list it was offered from is up to 30 s old).
  if (!row || (offered && (row.name !== offered.serverName || !inScope(row, offered.projectId))))
    return {
      content: offered
        ? `the tool ${offered.toolName} is no longer registered`
        : "this MCP server is no longer registered",
      isError: true,
    };
  let listChanged = false;
  const deadline = Date.now() + row.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let conn: Awaited<ReturnType<typeof connectMcp>>;
  // The server's auth header never reaches the transcript, even when the server echoes it back.
  let secret: Record<string, string> = {};
  const withheld = (out: McpResultOutput & { listChanged?: boolean }) => withheldFrom(out, secret);
  try {
    const endpoint = await endpointOf(env, row);
    secret = authHeaders(endpoint);
    conn = await connectMcp(env, endpoint, {
      timeoutMs: row.timeoutMs,
      deadline,
      onToolsChanged: () => (listChanged = true),
    });
  } catch (err) {
    return withheld({ content: `could not reach MCP server "${row.name}": ${message(err, secret)}`, isError: true });
  }
  try {
    const result = await conn.guard(conn.client.callTool({ name: mcpName, arguments: args }, { timeout: left() }));
    // The call answered: a list refresh that fails (the next refresh or call tries again) does not
    // take its result away. It is stored only while the server still has the name and url it was
    // listed under: a rename meanwhile would have its tools stored under the old name.
    if (listChanged)
      await listWith(conn, row.name, left())
        .then(({ tools, note }) =>
          saveMcpListing(env.DB, {
            tenantId,
            id: row.id,
            listing: { transport: conn.transport, tools, listedAt: new Date().toISOString(), error: note },
            listedAs: row,
          }),
        )
        // Only the withheld message: the SDK's error can echo the server's answer, auth header and all.
        .catch((err) =>
          console.error(`MCP server ${row.id}: the list did not refresh after list_changed: ${message(err, secret)}`),
        );
    const output = mcpResultOutput(result);
    // The cap holds for the server's text (past it, nothing is withheld: that search alone would
    // cost a 6 MiB message's time and memory) and for what is stored: the text with the auth
    // value withheld, longer when the server echoes it (each 4-character match becomes
    // "[<header name> withheld]", up to 75 characters).
    const textBytes = utf8Bytes(output.content);
    const stored =
      textBytes > MCP_MAX_RESULT_TEXT_BYTES ? null : withheld({ ...output, ...(listChanged ? { listChanged } : {}) });
    const storedBytes = stored ? utf8Bytes(stored.content) : textBytes;
    if (!stored || storedBytes > MCP_MAX_RESULT_TEXT_BYTES)
      return withheld({
        content: `MCP tool ${mcpName} on "${row.name}" returned ${textBytes} bytes of text${storedBytes === textBytes ? "" : ` (${storedBytes} with its auth value withheld)`}, more than the ${MCP_MAX_RESULT_TEXT_BYTES} one MCP tool result may hold; none of it is kept`,
        isError: true,
        ...(listChanged ? { listChanged } : {}),
      });
    return stored;
  } catch (err) {
    // Only the platform's own timeouts are told as one: a server's error that mentions a timeout
    // ("database query timed out") is its own message. It names the whole timeoutMs, which the
    // call shared with connecting.
    const why =
      err instanceof McpTimeout || (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
        ? `no answer within ${row.timeoutMs} ms`
        : message(err, secret);
    return withheld({ content: `MCP tool ${mcpName} on "${row.name}" failed: ${why}`, isError: true });
  } finally {
    await conn.close();
  }
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/** Whether a conversation of `projectId` (null: none) sees the server: a tenant-wide one, or its project's. */
const inScope = (row: McpServerRow, projectId: string | null) => row.projectId === null || row.projectId === projectId;

/** The output with every occurrence of the secret header's value (or its words) withheld, in its text and text blocks. */
function withheldFrom<T extends McpResultOutput>(out: T, secret: Record<string, string>): T {
  if (!Object.keys(secret).length) return out;
  return {
    ...out,
    content: scrub(out.content, secret),
    ...(out.blocks
      ? { blocks: out.blocks.map((b) => (b.type === "text" ? { ...b, text: scrub(b.text, secret) } : b)) }
      : {}),
  };
}
