/**
 * Structured outputs' schema rules, over every strict schema of a request: the input_schema of each
 * tool with `strict: true` and the JSON output schema (`output_config.format.schema`). Source:
 * https://platform.claude.com/docs/en/build-with-claude/structured-outputs ("Explicit limits", as
 * quoted in public copies of the page: the docs search here could not open it):
 *   - every object schema, at every nesting level, sets `additionalProperties: false` explicitly
 *     (wording from the API as reported: ax-llm/ax#458, veryfront/veryfront-code#3918, and
 *     BerriAI/litellm#35808 for an explicit `true`; the strict tool's path is ours, by analogy);
 *   - at most 24 optional parameters ("Each parameter not listed in `required` counts toward this
 *     limit") and at most 16 parameters using `anyOf` or type arrays, "the combined total across all
 *     strict schemas in a single request"; over either, "Schema is too complex for compilation".
 * Parameters are counted at every nesting level (properties of nested objects, of array items, of
 * `$defs` and of `anyOf` branches). tools.ts and values.ts have checked the schemas' shapes before.
 */
import { invalid } from "../errors";
import { isObject, type Rule } from "./context";

const MAX_OPTIONAL = 24;
const MAX_UNION = 16;

/** Keywords whose value is one subschema, a list of them, or a map of them. */
const ONE = ["items", "additionalProperties", "contains", "not", "if", "then", "else", "propertyNames"];
const LIST = ["prefixItems", "anyOf", "allOf", "oneOf"];
const MAP = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];

interface Tally {
  optional: number;
  union: number;
}

/** Every subschema of `schema`, itself first (a depth-first walk of the keywords above). */
function* subschemas(schema: Record<string, unknown>): Generator<Record<string, unknown>> {
  yield schema;
  const children = [
    ...ONE.map((key) => schema[key]),
    ...LIST.flatMap((key) => (Array.isArray(schema[key]) ? (schema[key] as unknown[]) : [])),
    ...MAP.flatMap((key) => (isObject(schema[key]) ? Object.values(schema[key]) : [])),
  ];
  for (const child of children) if (isObject(child)) yield* subschemas(child);
}

const isObjectType = (schema: Record<string, unknown>) =>
  schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));
const isUnion = (schema: unknown) => isObject(schema) && (Array.isArray(schema.anyOf) || Array.isArray(schema.type));

/** Checks one strict schema's objects and adds its parameters to the request's tally. */
function checkSchema(schema: Record<string, unknown>, { path, tally }: { path: string; tally: Tally }): void {
  for (const node of subschemas(schema)) {
    if (isObjectType(node) && node.additionalProperties === true)
      throw invalid(
        `${path}: For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false`,
      );
    if (isObjectType(node) && node.additionalProperties !== false)
      throw invalid(`${path}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
    if (!isObject(node.properties)) continue;
    const required = Array.isArray(node.required) ? node.required : [];
    for (const [name, property] of Object.entries(node.properties)) {
      if (!required.includes(name)) tally.optional++;
      if (isUnion(property)) tally.union++;
    }
  }
}

export const strictSchemaLimits: Rule = ({ body }) => {
  const tally: Tally = { optional: 0, union: 0 };
  for (const [n, tool] of (Array.isArray(body.tools) ? body.tools : []).entries())
    if (isObject(tool) && tool.strict === true && isObject(tool.input_schema))
      checkSchema(tool.input_schema, { path: `tools.${n}.custom.input_schema`, tally });
  const format = isObject(body.output_config) ? body.output_config.format : undefined;
  if (isObject(format) && isObject(format.schema))
    checkSchema(format.schema, { path: "output_config.format.schema", tally });
  if (tally.optional > MAX_OPTIONAL)
    throw invalid(
      `Schema is too complex for compilation: ${tally.optional} optional parameters across the strict schemas, at most ${MAX_OPTIONAL} (each parameter not listed in 'required' counts).`,
    );
  if (tally.union > MAX_UNION)
    throw invalid(
      `Schema is too complex for compilation: ${tally.union} parameters with union types (anyOf or type arrays) across the strict schemas, at most ${MAX_UNION}.`,
    );
};
