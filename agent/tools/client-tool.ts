// Client tools: tools the caller's own code runs (the Anthropic/OpenAI "function tool"
// convention). The platform never runs one: a call pauses the turn until the client posts its
// result (durable-objects/conversation/paused-turn.ts). A turn request may define them for that
// turn only, or a tenant may register them (the tool registry's `client` kind builds its rows with
// clientToolDefinition too).
import { z } from "zod";
import type { ClientToolSpec } from "../../core/client-tools";
import { sliceWhole } from "../../core/text-cut";
import type { ToolDefinition } from "./registry";

/** A tool the platform only relays: calling it pauses the turn for the client's result. */
export const runsOnClient = (tool: ToolDefinition<unknown> | undefined): boolean => tool?.runsOn === "client";

/**
 * A client tool as the registry holds it. `core` is true for a turn's own tools (they ride that
 * turn's requests without activation, and never enter <capabilities>, whose lines are the day's)
 * and false for a tenant's registered ones (found with tool_search, added with tool_activate).
 */
export function clientToolDefinition(
  spec: ClientToolSpec,
  opts: { core?: boolean } = {},
): ToolDefinition<Record<string, unknown>> {
  return {
    name: spec.name,
    description: spec.description,
    capability: `${spec.name}: ${firstLine(spec.description) || "a tool the client runs"} (runs on the client)`,
    core: opts.core ?? false,
    input: z.record(z.string(), z.unknown()),
    jsonSchema: spec.input_schema,
    runsOn: "client",
    // Reached only from a sub-agent's loop, which has no client to wait for.
    run: async () => ({ content: `${spec.name} runs on the client; only the main agent can call it`, isError: true }),
  };
}

const firstLine = (text: string) => sliceWhole(text.split("\n", 1)[0].trim(), 0, 160);
