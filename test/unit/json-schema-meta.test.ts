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
