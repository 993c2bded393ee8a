// An MCP tool's argument may be named `__proto__` (JSON allows any key). Flattening a top-level
// union kept the name in `required` but dropped its declaration: the properties were assigned onto
// a plain object (`properties["__proto__"] = …` sets the prototype) and a branch's property was
// skipped when the schema's own `properties` merely inherited the name. A schema with no union
// kept it all along.
import { describe, expect, it } from "vitest";
import { modelToolSchema } from "../../core/tool-schema";

const parsed = (json: string) => JSON.parse(json) as Record<string, unknown>;
const keys = (schema: Record<string, unknown>) => Object.keys(schema.properties as object);

describe("a union's argument named __proto__", () => {
  it("is declared in the flattened properties, as it is required", () => {
    const { schema } = modelToolSchema(
      parsed(
        '{"oneOf":[{"type":"object","properties":{"__proto__":{"type":"string"}},"required":["__proto__"]},' +
          '{"type":"object","properties":{"__proto__":{"type":"string"},"b":{"type":"string"}},"required":["__proto__"]}]}',
      ),
    );
    expect(keys(schema)).toEqual(["__proto__", "b"]);
    expect(Object.getOwnPropertyDescriptor(schema.properties, "__proto__")?.value).toEqual({ type: "string" });
    expect(schema.required).toEqual(["__proto__"]);
  });

  it("comes from a branch when the schema's own properties do not declare it", () => {
    const { schema } = modelToolSchema(
      parsed(
        '{"type":"object","properties":{"a":{"type":"integer"}},"anyOf":[' +
          '{"properties":{"__proto__":{"type":"string"}}},{"properties":{"c":{"type":"boolean"}}}]}',
      ),
    );
    expect(keys(schema).sort()).toEqual(["__proto__", "a", "c"]);
  });
});

describe("a definition named __proto__", () => {
  it("that a branch defines stays where the flattened ref points", () => {
    const { schema } = modelToolSchema(
      parsed(
        '{"oneOf":[{"type":"object","$defs":{"__proto__":{"type":"string","maxLength":5}},' +
          '"properties":{"x":{"$ref":"#/oneOf/0/$defs/__proto__"}},"required":["x"]},' +
          '{"type":"object","properties":{"y":{"type":"integer"}},"required":["y"]}]}',
      ),
    );
    const ref = (schema.properties as Record<string, { $ref: string }>).x.$ref;
    const defs = (schema.$defs ?? {}) as Record<string, unknown>;
    const name = ref.replace("#/$defs/", "");
    expect(Object.hasOwn(defs, name)).toBe(true);
    expect(Object.getOwnPropertyDescriptor(defs, name)?.value).toEqual({ type: "string", maxLength: 5 });
  });

  it("that no schema defines is a dangling ref, dropped as any other is", () => {
    const flattened = (name: string) =>
      modelToolSchema(
        parsed(
          `{"oneOf":[{"$ref":"#/$defs/${name}"},{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}]}`,
        ),
      );
    const proto = flattened("__proto__");
    expect(proto.schema.required).toEqual(["a"]);
    expect(JSON.stringify(proto)).toBe(JSON.stringify(flattened("nothere")));
  });
});
