// A tool's input_schema as the Messages API takes it: a JSON Schema object with "type": "object",
// top-level property names matching PROPERTY_KEY, and no oneOf / allOf / anyOf at its top level (400 "tools.N.custom.input_schema: input_schema
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
  const badKey = Object.keys(schema.properties ?? {}).find((k) => !PROPERTY_KEY.test(k));
  if (badKey !== undefined)
    return `property ${JSON.stringify(badKey)}: the Messages API takes argument names of 1 to 64 letters, digits, "_", "." or "-" (^[a-zA-Z0-9_.-]{1,64}$)`;
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
 * The API's rule for the names of input_schema's top-level properties (400 "tools.N.custom.
 * input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'"; nested
 * objects are not checked). Source: the API's error as reported (PrefectHQ/fastmcp#839,
 * erikmaday/unusual-whales-mcp#57).
 */
export const PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

/**
 * Top-level property names the API refuses, renamed to ones it takes ("filter[id]" → "filter_id_",
 * cut to 64, a suffix where two would meet), `required` with them. Deterministic, so the bytes the
 * model is sent stay the same turn after turn.
 */
function withApiPropertyKeys(schema: JsonSchema): { schema: JsonSchema; renamed?: Record<string, string> } {
  const properties = isSchemaObject(schema.properties) ? schema.properties : null;
  if (!properties || Object.keys(properties).every((k) => PROPERTY_KEY.test(k))) return { schema };
  const taken = new Set(Object.keys(properties).filter((k) => PROPERTY_KEY.test(k)));
  // No prototype: a new name of "__proto__" ("__proto_[" renamed) is a key like any other.
  const renamed: Record<string, string> = Object.create(null);
  const nameOf = new Map<string, string>();
  for (const key of Object.keys(properties)) {
    if (PROPERTY_KEY.test(key)) continue;
    const base = key.replace(/[^a-zA-Z0-9_.-]/g, "_").slice(0, 64) || "_";
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base.slice(0, 64 - `_${n}`.length)}_${n}`;
    taken.add(name);
    renamed[name] = key;
    nameOf.set(key, name);
  }
  const next: JsonSchema = {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [nameOf.get(k) ?? k, v])),
  };
  // Once each: a renamed property can meet a name `required` already held (["a b", "a_b_2"] with
  // "a b" → "a_b_2"), and the API refuses a schema whose `required` repeats a name.
  if (Array.isArray(schema.required))
    next.required = [...new Set(schema.required.map((r) => (typeof r === "string" ? (nameOf.get(r) ?? r) : r)))];
  return { schema: next, renamed };
}

/** A call's arguments under the tool's own names again (what `modelToolSchema` renamed for the API). */
export function originalArguments(
  input: Record<string, unknown>,
  renamed: Record<string, string> | undefined,
): Record<string, unknown> {
  if (!renamed) return input;
  // Own keys only: an argument named "constructor" or "toString" is no rename.
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [Object.hasOwn(renamed, k) ? renamed[k] : k, v]));
}

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
  const sendable = hasCombinator(typed) ? flattenUnion(typed) : { schema: typed, note: null };
  const keyed = withApiPropertyKeys(sendable.schema);
  return { ...sendable, schema: keyed.schema, ...(keyed.renamed ? { renamed: keyed.renamed } : {}) };
}

/** A description with the rewrite's note on a line of its own. */
export const withSchemaNote = (description: string, note: string | null): string =>
  note ? `${description}\n${note}` : description;
