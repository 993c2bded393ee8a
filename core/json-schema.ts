// The JSON Schema shapes tool-schema.ts and tool-schema-union.ts both speak (types only, so neither imports the other for them).

export type JsonSchema = Record<string, unknown>;

export interface ModelToolSchema {
  schema: JsonSchema;
  /** A line for the tool's description when the rewrite lost a rule the model should still know; null otherwise. */
  note: string | null;
  /** Top-level argument names the API would refuse, renamed: the name sent → the tool's own (see `originalArguments`). */
  renamed?: Record<string, string>;
}

// What the JSON Schema 2020-12 meta-schema asks of each keyword it defines, for every subschema.
// The Messages API checks a tool's input_schema against it ("tools.N.custom.input_schema: JSON
// schema is invalid. It must match JSON Schema draft 2020-12"), on every request carrying the tool.
const SIMPLE_TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const ONE_SCHEMA = [
  "items",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "contentSchema",
];
const SCHEMA_LISTS = ["prefixItems", "allOf", "anyOf", "oneOf"];
const COUNTS = [
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minContains",
  "maxContains",
];
const NUMBERS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
const STRINGS = [
  "pattern",
  "format",
  "title",
  "description",
  "$ref",
  "$id",
  "$schema",
  "$comment",
  "$dynamicRef",
  "$recursiveRef",
  "contentMediaType",
  "contentEncoding",
];
/** The meta-schema's anchorString: $anchor, $dynamicAnchor and the older $recursiveAnchor. */
const ANCHORS = ["$anchor", "$dynamicAnchor", "$recursiveAnchor"];
const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/;
/** $id: "Non-empty fragments not allowed." */
const ID = /^[^#]*#?$/;
const BOOLEANS = ["uniqueItems", "readOnly", "writeOnly", "deprecated"];
const MAX_DEPTH = 64;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const uniqueStrings = (v: unknown) =>
  Array.isArray(v) && v.every((x) => typeof x === "string") && new Set(v).size === v.length;

/**
 * Where `schema` breaks the 2020-12 meta-schema (a keyword of the wrong kind, a subschema that is
 * no schema), named by its path from `at`; null when it keeps it. Keywords it does not define pass.
 */
export function metaSchemaProblem(schema: unknown, at = "input_schema", depth = 0): string | null {
  if (typeof schema === "boolean") return null;
  if (!isObject(schema)) return `${at}: must be a schema (an object or true/false)`;
  if (depth > MAX_DEPTH) return `${at}: nested deeper than ${MAX_DEPTH} schemas`;
  const s = schema;
  const type = s.type;
  if (type !== undefined) {
    const names = Array.isArray(type) ? type : [type];
    const bad = names.find((t) => typeof t !== "string" || !SIMPLE_TYPES.has(t));
    if (bad !== undefined || !names.length)
      return `${at}.type: ${JSON.stringify(bad ?? type).slice(0, 40)} is not a JSON Schema type`;
    if (Array.isArray(type) && !uniqueStrings(type)) return `${at}.type: names a type twice`;
  }
  if (s.required !== undefined && !uniqueStrings(s.required))
    return `${at}.required: must be an array of distinct property names`;
  if (s.enum !== undefined && !Array.isArray(s.enum)) return `${at}.enum: must be an array`;
  if (s.examples !== undefined && !Array.isArray(s.examples)) return `${at}.examples: must be an array`;
  if (s.multipleOf !== undefined && !(typeof s.multipleOf === "number" && s.multipleOf > 0))
    return `${at}.multipleOf: must be a number above 0`;
  for (const k of COUNTS)
    if (s[k] !== undefined && !(Number.isInteger(s[k]) && (s[k] as number) >= 0))
      return `${at}.${k}: must be a whole number >= 0`;
  for (const k of NUMBERS) if (s[k] !== undefined && typeof s[k] !== "number") return `${at}.${k}: must be a number`;
  for (const k of STRINGS) if (s[k] !== undefined && typeof s[k] !== "string") return `${at}.${k}: must be a string`;
  for (const k of ANCHORS)
    if (s[k] !== undefined && !(typeof s[k] === "string" && ANCHOR.test(s[k])))
      return `${at}.${k}: must match ${ANCHOR.source}`;
  if (typeof s.$id === "string" && !ID.test(s.$id)) return `${at}.$id: must have no fragment (${ID.source})`;
  if (s.$vocabulary !== undefined) {
    if (!isObject(s.$vocabulary) || !Object.values(s.$vocabulary).every((v) => typeof v === "boolean"))
      return `${at}.$vocabulary: must map URIs to true or false`;
  }
  for (const k of BOOLEANS)
    if (s[k] !== undefined && typeof s[k] !== "boolean") return `${at}.${k}: must be true or false`;
  if (s.dependentRequired !== undefined) {
    if (!isObject(s.dependentRequired) || !Object.values(s.dependentRequired).every(uniqueStrings))
      return `${at}.dependentRequired: must map names to arrays of distinct names`;
  }
  // The older "dependencies": each value a schema (dependentSchemas) or distinct names (dependentRequired).
  if (s.dependencies !== undefined) {
    if (!isObject(s.dependencies)) return `${at}.dependencies: must be an object of schemas or arrays of names`;
    for (const [name, sub] of Object.entries(s.dependencies)) {
      if (Array.isArray(sub)) {
        if (!uniqueStrings(sub)) return `${at}.dependencies.${name}: must be a schema or an array of distinct names`;
        continue;
      }
      if (typeof sub !== "boolean" && !isObject(sub))
        return `${at}.dependencies.${name}: must be a schema or an array of distinct names`;
      const problem = metaSchemaProblem(sub, `${at}.dependencies.${name}`, depth + 1);
      if (problem) return problem;
    }
  }
  for (const k of SCHEMA_MAPS) {
    if (s[k] === undefined) continue;
    if (!isObject(s[k])) return `${at}.${k}: must be an object of schemas`;
    for (const [name, sub] of Object.entries(s[k] as Record<string, unknown>)) {
      const problem = metaSchemaProblem(sub, `${at}.${k}.${name}`, depth + 1);
      if (problem) return problem;
    }
  }
  for (const k of ONE_SCHEMA) {
    if (s[k] === undefined) continue;
    const problem = metaSchemaProblem(s[k], `${at}.${k}`, depth + 1);
    if (problem) return problem;
  }
  for (const k of SCHEMA_LISTS) {
    if (s[k] === undefined) continue;
    const list = s[k];
    if (!Array.isArray(list) || !list.length) return `${at}.${k}: must be a non-empty array of schemas`;
    for (const [i, sub] of list.entries()) {
      const problem = metaSchemaProblem(sub, `${at}.${k}.${i}`, depth + 1);
      if (problem) return problem;
    }
  }
  return null;
}
