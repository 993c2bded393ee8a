// Tool input schemas against the JSON Schema 2020-12 meta-schema, which the Messages API checks on
// every request carrying the tool: a tenant's or a turn's schema that breaks it is refused at the
// door, an MCP server's is offered without arguments, and the offline model refuses it as the API does.
import { describe, expect, it } from "vitest";
import { clientToolSpecSchema } from "../../core/client-tools";
import { metaSchemaProblem } from "../../core/json-schema";
import { inputSchemaProblem } from "../../core/tenant-tool-rules";
import { modelToolSchema } from "../../core/tool-schema";

const invalid: [string, Record<string, unknown>, string][] = [
  [
    "a typo in a property's type",
    { type: "object", properties: { city: { type: "strin" } } },
    'input_schema.properties.city.type: "strin" is not a JSON Schema type',
  ],
  [
    "a property that is not a schema",
    { type: "object", properties: { city: 5 } },
    "input_schema.properties.city: must be a schema (an object or true/false)",
  ],
  [
    "additionalProperties that is not a schema",
    { type: "object", properties: {}, additionalProperties: "no" },
    "input_schema.additionalProperties: must be a schema (an object or true/false)",
  ],
  [
    "required with a repeated name",
    { type: "object", properties: { a: { type: "string" } }, required: ["a", "a"] },
    "input_schema.required: must be an array of distinct property names",
  ],
  [
    "a nested items with a negative minItems",
    { type: "object", properties: { tags: { type: "array", items: { type: "string" }, minItems: -1 } } },
    "input_schema.properties.tags.minItems: must be a whole number >= 0",
  ],
  [
    "an empty anyOf deep inside",
    { type: "object", properties: { v: { anyOf: [] } } },
    "input_schema.properties.v.anyOf: must be a non-empty array of schemas",
  ],
  [
    "a contentMediaType that is not a string",
    { type: "object", properties: { a: { type: "string", contentMediaType: 5 } } },
    "input_schema.properties.a.contentMediaType: must be a string",
  ],
  [
    "a contentEncoding that is not a string",
    { type: "object", properties: { a: { type: "string", contentEncoding: true } } },
    "input_schema.properties.a.contentEncoding: must be a string",
  ],
  [
    "a contentSchema that is not a schema",
    { type: "object", properties: { a: { type: "string", contentSchema: "x" } } },
    "input_schema.properties.a.contentSchema: must be a schema (an object or true/false)",
  ],
  [
    "a contentSchema that breaks the meta-schema inside",
    { type: "object", properties: { a: { type: "string", contentSchema: { type: "strin" } } } },
    'input_schema.properties.a.contentSchema.type: "strin" is not a JSON Schema type',
  ],
  [
    "an $anchor starting with a digit",
    { type: "object", properties: { a: { $anchor: "1bad" } } },
    "input_schema.properties.a.$anchor: must match ^[A-Za-z_][-A-Za-z0-9._]*$",
  ],
  [
    "a $dynamicAnchor with a space",
    { type: "object", properties: { a: { $dynamicAnchor: "a b" } } },
    "input_schema.properties.a.$dynamicAnchor: must match ^[A-Za-z_][-A-Za-z0-9._]*$",
  ],
  [
    "a $dynamicRef that is not a string",
    { type: "object", properties: { a: { $dynamicRef: 5 } } },
    "input_schema.properties.a.$dynamicRef: must be a string",
  ],
  [
    "an $id with a fragment",
    { type: "object", properties: { a: { $id: "http://x/y#frag" } } },
    "input_schema.properties.a.$id: must have no fragment (^[^#]*#?$)",
  ],
  [
    "a $vocabulary that maps to something other than true/false",
    { type: "object", properties: { a: { $vocabulary: { "https://example.com/vocab": 1 } } } },
    "input_schema.properties.a.$vocabulary: must map URIs to true or false",
  ],
  [
    "a dependencies value that is neither a schema nor names",
    { type: "object", properties: { a: { type: "object", dependencies: { b: 5 } } } },
    "input_schema.properties.a.dependencies.b: must be a schema or an array of distinct names",
  ],
  [
    "a dependencies value naming a property twice",
    { type: "object", properties: { a: { type: "object", dependencies: { b: ["c", "c"] } } } },
    "input_schema.properties.a.dependencies.b: must be a schema or an array of distinct names",
  ],
  [
    "a dependencies schema that breaks the meta-schema inside",
    { type: "object", properties: { a: { type: "object", dependencies: { b: { minItems: -1 } } } } },
    "input_schema.properties.a.dependencies.b.minItems: must be a whole number >= 0",
  ],
];

const valid: Record<string, unknown>[] = [
  { type: "object", properties: {} },
  {
    type: "object",
    properties: {
      q: { type: "string", description: "the query", minLength: 1, pattern: "^[a-z]+$" },
      n: { type: ["integer", "null"], minimum: 0, maximum: 10, default: 3 },
      tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, uniqueItems: true },
      any: true,
      where: { $ref: "#/$defs/place" },
      mode: { oneOf: [{ const: "x" }, { const: "y" }] },
    },
    required: ["q"],
    additionalProperties: false,
    $defs: { place: { type: "object", properties: { city: { type: "string" } } } },
    definitions: { old: { type: "string" } },
    "x-vendor-extension": { anything: [1, 2, 3] },
  },
  {
    type: "object",
    properties: {
      doc: {
        type: "string",
        contentMediaType: "application/json",
        contentEncoding: "base64",
        contentSchema: { type: "object" },
      },
      node: { $id: "https://example.com/node#", $anchor: "node", $dynamicAnchor: "_node-1.x" },
      next: { $dynamicRef: "#node", $vocabulary: { "https://example.com/vocab": true } },
      card: { type: "object", dependencies: { number: ["expiry"], holder: { required: ["name"] } } },
    },
  },
];

describe("the 2020-12 meta-schema", () => {
  for (const [what, schema, problem] of invalid)
    it(`${what}: named by its path, refused for tenant and client tools, and not sent for an MCP tool`, () => {
      expect(metaSchemaProblem(schema)).toBe(problem);
      expect(inputSchemaProblem(schema)).toContain(problem);
      expect(clientToolSpecSchema.safeParse({ name: "t", input_schema: schema }).success).toBe(false);
      const sent = modelToolSchema(schema);
      expect(sent.schema).toEqual({ type: "object", properties: {} });
      expect(sent.note).toContain(problem);
    });

  it("takes what it defines, done right, and keywords it does not define", () => {
    for (const schema of valid) {
      expect(metaSchemaProblem(schema)).toBeNull();
      // A tenant's tool takes only known keywords at its top level (tenant-tool-rules.ts): those.
      const { type, properties, required, additionalProperties } = schema;
      expect(inputSchemaProblem({ type, properties, required, additionalProperties })).toBeNull();
      expect(modelToolSchema(schema).note).toBeNull();
    }
  });
});
