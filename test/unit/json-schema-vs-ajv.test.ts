// The project's own 2020-12 meta-schema check (core/json-schema.ts) against Ajv's copy of the
// meta-schema, which the Messages API's check follows: for each schema, refused by one exactly when
// refused by the other. Ajv is installed at the top of node_modules (a dependency of
// @modelcontextprotocol/sdk, package-lock.json), so a clean `npm ci` has it. Ajv reads no
// "format" here (no ajv-formats), as the project does not: URIs and regexes are not compared.
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { metaSchemaProblem } from "../../core/json-schema";

const META = "https://json-schema.org/draft/2020-12/schema";
const ajv = new Ajv2020();
const metaSchema = ajv.getSchema(META);
if (!metaSchema) throw new Error(`Ajv has no ${META}`);
const ajvTakes = (schema: unknown) => metaSchema(schema) === true;

const inObject = (sub: Record<string, unknown>) => ({ type: "object", properties: { a: sub } });

const refused: [string, Record<string, unknown>][] = [
  ["contentMediaType: 5", { type: "object", properties: { a: { type: "string", contentMediaType: 5 } } }],
  ["contentEncoding: true", inObject({ type: "string", contentEncoding: true })],
  ['contentSchema: "x"', inObject({ type: "string", contentSchema: "x" })],
  ['$anchor: "1bad"', inObject({ $anchor: "1bad" })],
  ["$dynamicRef: 5", { $dynamicRef: 5 }],
  ['$id: "http://x/y#frag"', inObject({ $id: "http://x/y#frag" })],
  ["dependencies: { b: 5 }", { type: "object", dependencies: { b: 5 } }],
  ['dependencies: { b: ["c", "c"] }', { type: "object", dependencies: { b: ["c", "c"] } }],
  ['dependencies: { b: { type: "strin" } }', { type: "object", dependencies: { b: { type: "strin" } } }],
  ['$dynamicAnchor: "a b"', inObject({ $dynamicAnchor: "a b" })],
  ["$vocabulary: { u: 1 }", inObject({ $vocabulary: { "https://example.com/v": 1 } })],
  ['$vocabulary: "x"', inObject({ $vocabulary: "x" })],
  ["$recursiveAnchor: true", inObject({ $recursiveAnchor: true })],
  ["$recursiveRef: 5", inObject({ $recursiveRef: 5 })],
  ["contentSchema: { minLength: -1 }", inObject({ contentSchema: { minLength: -1 } })],
  ['type: "strin"', inObject({ type: "strin" })],
  ["a property of 5", { type: "object", properties: { a: 5 } }],
  ['required: ["a", "a"]', { type: "object", required: ["a", "a"] }],
  ["anyOf: []", inObject({ anyOf: [] })],
];

const taken: [string, Record<string, unknown>][] = [
  ["an empty object schema", { type: "object", properties: {} }],
  [
    "content keywords done right",
    inObject({
      type: "string",
      contentMediaType: "application/json",
      contentEncoding: "base64",
      contentSchema: { type: "object" },
    }),
  ],
  ["an $anchor and $dynamicAnchor done right", inObject({ $anchor: "_a-1.b", $dynamicAnchor: "node" })],
  ["a $dynamicRef", inObject({ $dynamicRef: "#node" })],
  ["an $id with an empty fragment", inObject({ $id: "http://x/y#" })],
  ["an $id without a fragment", inObject({ $id: "http://x/y" })],
  ["a $vocabulary of booleans", inObject({ $vocabulary: { "https://example.com/v": false } })],
  ["dependencies of names and of schemas", { type: "object", dependencies: { b: ["c"], d: { required: ["e"] } } }],
  ["a $recursiveAnchor and $recursiveRef", inObject({ $recursiveAnchor: "x", $recursiveRef: "#" })],
  ["keywords it does not define", { type: "object", "x-anything": { $anchor: 5 } }],
];

describe("the project's meta-schema check agrees with Ajv's 2020-12 meta-schema", () => {
  for (const [what, schema] of refused)
    it(`both refuse ${what}`, () => {
      expect(ajvTakes(schema)).toBe(false);
      expect(metaSchemaProblem(schema)).not.toBeNull();
    });
  for (const [what, schema] of taken)
    it(`both take ${what}`, () => {
      expect(ajvTakes(schema)).toBe(true);
      expect(metaSchemaProblem(schema)).toBeNull();
    });
});
