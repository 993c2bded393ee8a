// Renamed top-level arguments of a published (MCP) schema: a call's arguments are named back only
// by the renames themselves, never by an inherited member of an object ("constructor",
// "toString"); and `required` after the renames is a list the Messages API takes (no name twice).
import { describe, expect, it } from "vitest";
import { metaSchemaProblem } from "../../core/json-schema";
import { modelToolSchema, originalArguments, schemaProblem } from "../../core/tool-schema";

describe("arguments named back after a rename", () => {
  it("keeps an argument named constructor, toString or __proto__ as it is", () => {
    const { renamed } = modelToolSchema(
      JSON.parse(
        '{"type":"object","properties":{"filter[id]":{"type":"string"},"constructor":{"type":"string"},"toString":{"type":"string"},"hasOwnProperty":{"type":"string"}}}',
      ),
    );
    expect(renamed).toBeDefined();
    const args = originalArguments(
      JSON.parse('{"filter_id_":"1","constructor":"c","toString":"t","hasOwnProperty":"h","__proto__":"p"}'),
      renamed,
    );
    expect(Object.keys(args).sort()).toEqual(
      ["__proto__", "constructor", "filter[id]", "hasOwnProperty", "toString"].sort(),
    );
    expect(args.constructor).toBe("c");
    expect(args.toString).toBe("t");
    expect(args["filter[id]"]).toBe("1");
  });

  it("names back a property renamed to __proto__", () => {
    const { schema, renamed } = modelToolSchema({ type: "object", properties: { "__proto_[": { type: "string" } } });
    expect(Object.keys(schema.properties ?? {})).toEqual(["__proto__"]);
    expect(originalArguments(JSON.parse('{"__proto__":"p"}'), renamed)).toEqual({ "__proto_[": "p" });
  });
});

describe("required after a rename", () => {
  it("names each property once, so the API takes the schema", () => {
    const { schema } = modelToolSchema({
      type: "object",
      properties: { "a b": { type: "string" }, a_b: { type: "string" } },
      required: ["a b", "a_b_2"],
    });
    expect(schema.required).toEqual(["a_b_2"]);
    expect(schemaProblem(schema)).toBeNull();
    expect(metaSchemaProblem(schema)).toBeNull();
  });

  it("keeps a required list without repeats as it was", () => {
    const { schema } = modelToolSchema({
      type: "object",
      properties: { "x[1]": { type: "string" }, y: { type: "number" } },
      required: ["y", "x[1]"],
    });
    expect(schema.required).toEqual(["y", "x_1_"]);
  });
});
