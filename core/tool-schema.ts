// A tool's input_schema as the Messages API takes it: a JSON Schema object with "type": "object"
// and no oneOf / allOf / anyOf at its top level (400 "tools.N.custom.input_schema: input_schema
// does not support oneOf, allOf, or anyOf at the top level", on every request that carries the
// tool; research: request-rules.md §4.3). A schema a tenant writes is refused with that reason
// (schemaProblem); one a remote MCP server publishes, which nobody can fix by hand, is rewritten
// into a flat object schema the model can still follow (modelToolSchema, tool-schema-union.ts).
import { metaSchemaProblem, type JsonSchema, type ModelToolSchema } from "./json-schema";
import { flattenUnion } from "./tool-schema-union";

export type { JsonSchema, ModelToolSchema } from "./json-schema";

export const COMBINATORS = ["anyOf", "oneOf", "allOf"] as const;

export const isSchemaObject = (v: unknown): v is JsonSchema => !!v && typeof v === "object" && !Array.isArray(v);
const hasCombinator = (s: JsonSchema) => COMBINATORS.some((k) => s[k] !== undefined);

/** Why the API would refuse `schema` as a tool's input_schema, or null when it takes it. */
export function schemaProblem(schema: unknown): string | null {
  if (!isSchemaObject(schema)) return "must be a JSON Schema object";
  if (schema.type !== "object") return 'must have "type": "object" (a tool takes named arguments)';
  const union = COMBINATORS.filter((k) => schema[k] !== undefined);
  if (union.length)
    return `${union.join(", ")} at the top level: the Messages API does not support oneOf, allOf, or anyOf at the top level of input_schema; declare every argument under "properties" and say in the description which combinations are allowed`;
  if (schema.properties !== undefined && !isSchemaObject(schema.properties)) return '"properties" must be an object';
  if (
    schema.required !== undefined &&
    (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== "string"))
  )
    return '"required" must be an array of property names';
  const deep = metaSchemaProblem(schema);
  return deep ? `not valid JSON Schema (2020-12), which the Messages API requires: ${deep}` : null;
}

const EMPTY: JsonSchema = { type: "object", properties: {} };

/**
 * The schema the model is sent for a schema published elsewhere (an MCP server's): unchanged when
 * the API takes it; a top-level union flattened into one object (every branch's properties,
 * required = what every alternative requires, the combinations stated in `note`); a schema with
 * properties but no "type" gets "type": "object". A schema that is not an object at all cannot be
 * sent: the tool is offered without arguments, and `note` says so. Deterministic: the same
 * schema always gives the same bytes, so the prompt cache holds.
 */
export function modelToolSchema(declared: unknown): ModelToolSchema {
  if (!isSchemaObject(declared))
    return { schema: EMPTY, note: "Its input schema could not be read, so it is offered without arguments." };
  const untyped =
    declared.type === undefined &&
    (isSchemaObject(declared.properties) || hasCombinator(declared) || Object.keys(declared).length === 0);
  const objectTyped = declared.type === "object" || (Array.isArray(declared.type) && declared.type.includes("object"));
  if (!untyped && !objectTyped)
    return {
      schema: EMPTY,
      note: `Its input schema is ${JSON.stringify(declared.type ?? "untyped")}, not an object of named arguments, so it is offered without arguments.`,
    };
  // The API checks the whole schema against the 2020-12 meta-schema: one that breaks it cannot be sent.
  const invalid = metaSchemaProblem(declared);
  if (invalid)
    return {
      schema: EMPTY,
      note: `Its input schema is not valid JSON Schema (${invalid}), so it is offered without arguments.`,
    };
  const typed: JsonSchema = { ...declared, type: "object" };
  if (!hasCombinator(typed)) return { schema: typed, note: null };
  return flattenUnion(typed);
}

/** A description with the rewrite's note on a line of its own. */
export const withSchemaNote = (description: string, note: string | null): string =>
  note ? `${description}\n${note}` : description;
