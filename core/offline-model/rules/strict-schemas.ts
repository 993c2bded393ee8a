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
 *
 * The page's "Not supported" list ("Both JSON outputs and strict tool use share these limitations";
 * "If you use an unsupported feature, you'll receive a 400 error with details"), refused at the
 * schema's path: numerical constraints (`minimum`, `maximum`, `multipleOf`, "etc.": the exclusive
 * bounds too), string constraints (`minLength`, `maxLength`), array constraints beyond `minItems` of
 * 0 or 1 (wording for `minItems` from the API as reported, ghostlobster/memorize-everything#93; the
 * rest ours, in its form), complex types within enums, external `$ref` and recursive schemas
 * ("Too many recursive definitions in schema", the page's wording). Regex features the page lists as
 * not supported (backreferences, lookaround, `\b`) "may result in 400 errors": not refused here.
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

/** Numerical constraints: "Numerical constraints (`minimum`, `maximum`, `multipleOf`, etc.)". */
const NUMERIC = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
/** String constraints: "String constraints (`minLength`, `maxLength`)". */
const STRING = ["minLength", "maxLength"];
/** "Array constraints beyond `minItems` of 0 or 1" (minItems is checked by value, uniqueItems when true). */
const ARRAY = ["maxItems", "contains", "minContains", "maxContains"];

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

/** The first keyword of `node` the page lists as not supported, as the refusal's detail. */
function unsupported(node: Record<string, unknown>): string | null {
  const type = (fallback: string) => (typeof node.type === "string" ? node.type : fallback);
  const numeric = NUMERIC.find((key) => key in node);
  if (numeric) return `For '${type("number")}' type, property '${numeric}' is not supported`;
  const string = STRING.find((key) => key in node);
  if (string) return `For '${type("string")}' type, property '${string}' is not supported`;
  if ("minItems" in node && node.minItems !== 0 && node.minItems !== 1)
    return "For 'array' type, 'minItems' values other than 0 or 1 are not supported";
  const array = ARRAY.find((key) => key in node) ?? (node.uniqueItems === true ? "uniqueItems" : undefined);
  if (array) return `For '${type("array")}' type, property '${array}' is not supported`;
  if (Array.isArray(node.enum) && node.enum.some((value) => value !== null && typeof value === "object"))
    return "'enum' values must be strings, numbers, booleans or null: complex types within enums are not supported";
  if (typeof node.$ref === "string" && !node.$ref.startsWith("#"))
    return `External '$ref' is not supported: '${node.$ref}'`;
  return null;
}

/** The subschema a local `$ref` points at (`#`, `#/$defs/name`, any JSON pointer), if it resolves. */
function resolve(root: Record<string, unknown>, ref: string): Record<string, unknown> | null {
  if (ref !== "#" && !ref.startsWith("#/")) return null;
  let node: unknown = root;
  for (const token of ref.slice(2).split("/").filter(Boolean)) {
    const key = token.replaceAll("~1", "/").replaceAll("~0", "~");
    node = isObject(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
  }
  return isObject(node) ? node : null;
}

/**
 * Whether following local `$ref`s from the root comes back to a schema still being expanded: a
 * depth-first walk over the schemas refs point at, `open` the ones on the current path, `done`
 * the ones fully expanded.
 */
function recursive(root: Record<string, unknown>): boolean {
  const open = new Set<Record<string, unknown>>();
  const done = new Set<Record<string, unknown>>();
  const expand = (schema: Record<string, unknown>): boolean => {
    if (open.has(schema)) return true;
    if (done.has(schema)) return false;
    open.add(schema);
    for (const node of subschemas(schema)) {
      const target = typeof node.$ref === "string" ? resolve(root, node.$ref) : null;
      if (target && expand(target)) return true;
    }
    open.delete(schema);
    done.add(schema);
    return false;
  };
  return expand(root);
}

/** Checks one strict schema's keywords and objects and adds its parameters to the request's tally. */
function checkSchema(schema: Record<string, unknown>, { path, tally }: { path: string; tally: Tally }): void {
  for (const node of subschemas(schema)) {
    const detail = unsupported(node);
    if (detail) throw invalid(`${path}: ${detail}`);
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
  if (recursive(schema)) throw invalid(`${path}: Too many recursive definitions in schema`);
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
