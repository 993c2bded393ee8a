// The tenant's registered tools (the `tools` table) as one tool source: each row in the
// conversation's scope becomes a ToolDefinition of its kind. A project's tool takes the place of
// a tenant-wide one of the same name in that project's conversations. An HTTP tool's call re-reads
// its row (definitions outlive a PATCH or DELETE: a turn's registry, the 30 s cache), so it goes to
// the endpoint with the headers the row has now, and a deleted tool is not called.
import { z } from "zod";
import { loopbackAllowed } from "../../core/outbound-url";
import { modelToolSchema, originalArguments, withSchemaNote } from "../../core/tool-schema";
import { callHttpTool } from "../../services/tools/http-call";
import { getTool, openHeaders, toolsInScope, type ToolRow } from "../../services/tools/tool-store";
import { clientToolDefinition } from "./client-tool";
import { sliceWhole } from "../../core/text-cut";
import type { ToolScope, ToolSource } from "./external";
import type { CallScope, ToolDefinition } from "./registry";

type ToolEnv = Env & { TOOL_SECRETS_KEY?: string; ALLOW_LOOPBACK_TOOLS?: string };

/** A call's input is the tool's own business (its endpoint validates it); here it must be an object. */
const anyObject = z.record(z.string(), z.unknown());

/**
 * The row's <capabilities> line: its name and its description's first sentence, on one line (a line break in a
 * tenant's description would otherwise start lines of the system prompt's index of its own).
 */
const capabilityOf = (row: ToolRow) =>
  `${row.name}: ${sliceWhole((row.description.split(/(?<=[.!?])\s/)[0] ?? "").replace(/\s*[\n\r\v\f\u0085\u2028\u2029]\s*/g, " "), 0, 120)}`;

/**
 * The row's schema and description as the model is sent them. Registration refuses what the
 * Messages API refuses (core/tool-schema.ts); a row stored before that rule (a top-level anyOf)
 * is flattened here rather than failing every request that carries it.
 */
function modelView(row: ToolRow): {
  description: string;
  input_schema: Record<string, unknown>;
  renamed?: Record<string, string>;
} {
  const { schema, note, renamed } = modelToolSchema(JSON.parse(row.inputSchema));
  return { description: withSchemaNote(row.description, note), input_schema: schema, ...(renamed ? { renamed } : {}) };
}

export function httpToolDefinition(row: ToolRow, env: ToolEnv): ToolDefinition<Record<string, unknown>, CallScope> {
  const view = modelView(row);
  return {
    name: row.name,
    description: view.description,
    capability: capabilityOf(row),
    core: false,
    input: anyObject,
    jsonSchema: view.input_schema,
    async run(input, ctx) {
      // The row as it is now: the definition may have been built before a PATCH or DELETE.
      const now = await getTool(env.DB, row.tenantId, row.id);
      if (now?.kind !== "http" || now.name !== row.name || now.projectId !== row.projectId)
        return { content: `the tool ${row.name} is no longer registered`, isError: true };
      let headers: Record<string, string>;
      try {
        headers = await openHeaders(env, now);
      } catch {
        // The key changed or is missing: say so without a word of the sealed value.
        return {
          content: `${row.name}: its stored headers cannot be opened (TOOL_SECRETS_KEY missing or changed); the tool's owner must set them again`,
          isError: true,
        };
      }
      const out = await callHttpTool(
        {
          name: row.name,
          endpoint: now.endpoint ?? "",
          headers,
          timeoutMs: now.timeoutMs,
          maxResponseBytes: now.maxResponseBytes,
          idempotent: now.idempotent,
          retries: now.retries,
        },
        {
          input: originalArguments(input, view.renamed),
          ids: { conversationId: ctx.conversationId, turnId: ctx.turnId, callId: ctx.callId },
          allowLoopback: loopbackAllowed(env),
        },
      );
      return { content: out.content, ...(out.isError ? { isError: true } : {}) };
    },
  };
}

/**
 * A registered client tool: the caller's application runs it while the turn waits
 * (requires_action). Not core: one <capabilities> line, found by tool_search, added by tool_activate.
 */
export function registeredClientTool(row: ToolRow): ToolDefinition<unknown> {
  const { renamed: _renamed, ...view } = modelView(row);
  return clientToolDefinition({ name: row.name, ...view });
}

export async function registeredTools(scope: ToolScope): Promise<ToolDefinition<unknown>[]> {
  const rows = await toolsInScope(scope.env.DB, scope.tenantId, scope.projectId);
  const byName = new Map<string, ToolRow>();
  for (const row of rows) if (!byName.has(row.name) || row.projectId) byName.set(row.name, row);
  const out: ToolDefinition<unknown>[] = [];
  for (const row of byName.values()) {
    const tool = row.kind === "http" ? httpToolDefinition(row, scope.env as ToolEnv) : registeredClientTool(row);
    if (tool) out.push(tool);
  }
  return out;
}

/** The `registered` kind of tenant tool (listed in agent/tools/index.ts). */
export const registeredToolSource: ToolSource = { kind: "registered", load: registeredTools };
