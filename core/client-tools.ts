// Client tools on the wire: the `tools` a turn request may define, and the results a client posts
// back for the calls a paused turn waits on. Shared by the HTTP routes and websocket frames so
// both accept and reject exactly the same input.
import { z } from "zod";
import { nonBlankText } from "./blank-text";
import { imageProblems, imageSourceSchema, imagesOf } from "./image-input";
import { schemaProblem } from "./tool-schema";
import type { ToolResultBlock } from "./types";
import { refusingProtoKey } from "./validation";

export const CLIENT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_CLIENT_TOOLS_PER_TURN = 64;
export const MAX_CLIENT_TOOL_DESCRIPTION = 4_096;
/** One tool's schema, serialized: a schema rides every request of the turn, so it is kept small. */
export const MAX_CLIENT_TOOL_SCHEMA_BYTES = 16_384;
export const MAX_RESULTS_PER_POST = 64;
/** A result's text, as a turn's own text: anything larger belongs in an attachment. */
const MAX_RESULT_TEXT_CHARS = 1_000_000;

export interface ClientToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/**
 * What the API document says of an input_schema beyond "an object": it must declare its "type"
 * (schemaProblem refuses any but "object"). Typed as a string, not the constant: a client's tool
 * written as a plain object literal (its "object" widened to string) keeps compiling.
 */
export const OBJECT_SCHEMA_DOC = {
  description:
    'A JSON Schema (2020-12) object with "type": "object", arguments under "properties", and no oneOf / allOf / anyOf at its top level.',
  properties: { type: { type: "string", description: 'always "object": a tool takes named arguments' } },
  required: ["type"],
};

/** What the Messages API takes as input_schema (core/tool-schema.ts), and small. */
const objectSchema = refusingProtoKey(
  z
    .record(z.string(), z.unknown())
    .superRefine((s, ctx) => {
      const problem = schemaProblem(s);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .refine(
      (s) => JSON.stringify(s).length <= MAX_CLIENT_TOOL_SCHEMA_BYTES,
      `must be at most ${MAX_CLIENT_TOOL_SCHEMA_BYTES} bytes as JSON`,
    )
    .meta(OBJECT_SCHEMA_DOC),
);

export const clientToolSpecSchema = z.strictObject({
  name: z.string().regex(CLIENT_TOOL_NAME, "letters, digits, _ and - only, 1-64 characters"),
  description: z.string().max(MAX_CLIENT_TOOL_DESCRIPTION).default(""),
  input_schema: objectSchema,
});

/** The `tools` of a turn request: unique names (a built-in's name is refused where the registry is known). */
export const turnToolsSchema = z
  .array(clientToolSpecSchema)
  .min(1)
  .max(MAX_CLIENT_TOOLS_PER_TURN)
  .superRefine((tools, ctx) => {
    const seen = new Set<string>();
    tools.forEach((t, i) => {
      if (seen.has(t.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `${t.name} is defined twice` });
      seen.add(t.name);
    });
  });

/** The names among `tools` that are already taken (built-in tools): a turn may not redefine them. */
export function takenToolNames(tools: readonly ClientToolSpec[] | undefined, taken: readonly string[]): string | null {
  const clash = (tools ?? []).map((t, i) => ({ t, i })).filter(({ t }) => taken.includes(t.name));
  return clash.length
    ? clash.map(({ t, i }) => `tools.${i}.name: ${t.name} is a built-in or server tool's name`).join("; ")
    : null;
}

/**
 * The refusal of a new turn whose `tools` redefine tools the tenant registered (`registered`: the
 * names in the conversation's scope), in the turn's order; null when none does. The conversation
 * object refuses with the same words (turn-runner.ts).
 */
export function registeredToolClash(
  tools: readonly ClientToolSpec[] | undefined,
  registered: ReadonlySet<string>,
): string | null {
  const clash = (tools ?? []).filter((t) => registered.has(t.name)).map((t) => t.name);
  return clash.length ? `tools: ${clash.join(", ")} already registered for this tenant` : null;
}

// A result is stored and replayed like a turn's own content: blank text (or no blocks at all) and
// images over the API's limits are refused here, naming the result, before anything is saved.
const resultText = z.strictObject({ type: z.literal("text"), text: nonBlankText(MAX_RESULT_TEXT_CHARS) });
const resultImage = z.strictObject({ type: z.literal("image"), source: imageSourceSchema });

export const clientToolResultSchema = z.strictObject({
  tool_use_id: z.string().min(1).max(128),
  content: z.union([
    nonBlankText(MAX_RESULT_TEXT_CHARS),
    z
      .array(z.discriminatedUnion("type", [resultText, resultImage]))
      .min(1, "must hold at least one block")
      .max(50),
  ]),
  is_error: z.boolean().optional(),
});

export const toolResultsBodySchema = z
  .strictObject({
    results: z
      .array(clientToolResultSchema)
      .min(1)
      .max(MAX_RESULTS_PER_POST)
      .superRefine((results, ctx) => {
        // The images of one post join the same request: the count rule (over 20) spans them all.
        const images = results.flatMap((r, i) =>
          typeof r.content === "string" ? [] : imagesOf(r.content, [i, "content"]),
        );
        for (const { path, problem } of imageProblems(images)) ctx.addIssue({ code: "custom", path, message: problem });
      }),
  })
  .meta({ id: "ToolResultsBody", description: "The results of the client tool calls a paused turn waits on." });

export type ClientToolResult = z.infer<typeof clientToolResultSchema>;

export function toToolResultBlock(r: ClientToolResult): ToolResultBlock {
  return {
    type: "tool_result",
    tool_use_id: r.tool_use_id,
    content: r.content as ToolResultBlock["content"],
    ...(r.is_error ? { is_error: true } : {}),
  };
}
