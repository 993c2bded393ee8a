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
