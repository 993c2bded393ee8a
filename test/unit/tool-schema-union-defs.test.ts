// An MCP tool's schema with a top-level union is flattened into one object schema (the Messages
// API takes no union at the top of input_schema): every local $ref in it must still resolve, to
// the schema it meant in the published one, and the API's rules must still take the result.
import { afterAll, describe, expect, it } from "vitest";
import { handleMessagesRequest } from "../../core/offline-model";
import { modelToolSchema, schemaProblem, type JsonSchema } from "../../core/tool-schema";

const isObj = (v: unknown): v is JsonSchema => !!v && typeof v === "object" && !Array.isArray(v);

/** What a local ref points at in `doc` (RFC 6901, percent-decoded), or undefined. */
function target(doc: unknown, ref: string): unknown {
  if (ref === "#") return doc;
  let node = doc;
  for (const raw of ref.slice(2).split("/")) {
    const t = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    node = Array.isArray(node) ? node[Number(t)] : isObj(node) && Object.hasOwn(node, t) ? node[t] : undefined;
  }
  return node;
}

/** Every $ref string in `node`, at any depth. */
const refs = (node: unknown): string[] =>
  Array.isArray(node)
    ? node.flatMap(refs)
    : isObj(node)
      ? [...(typeof node.$ref === "string" ? [node.$ref] : []), ...Object.values(node).flatMap(refs)]
      : [];

/** Every schema flattened here, sent to the offline model as tools at the end. */
const sent: JsonSchema[] = [];

/** The schema the MCP listing's tools are sent with, checked: no ref dangles, and the API's rules take it. */
function flattened(published: JsonSchema): JsonSchema {
  const { schema } = modelToolSchema(published);
  expect(schemaProblem(schema)).toBeNull();
  for (const ref of refs(schema)) expect(target(schema, ref), ref).toBeDefined();
  sent.push(schema);
  return schema;
}

afterAll(async () => {
  // The offline model (the Messages API's stand-in) takes them all as tools' input_schema.
  expect(sent.length).toBeGreaterThan(0);
  const response = await handleMessagesRequest(
    new Request("https://offline-model.invalid/v1/messages", {
      method: "POST",
      body: JSON.stringify({
        model: "claude-haiku-5-5",
        max_tokens: 1024,
        messages: [{ role: "user", content: "Hello." }],
        tools: sent.map((input_schema, i) => ({ name: `t${i}`, description: "A tool", input_schema })),
      }),
    }),
    { now: () => Date.UTC(2026, 11, 3, 12) },
  );
  expect(response.status, await response.clone().text()).toBe(200);
});

const THING = { type: "object", properties: { x: { type: "number" } } };

describe("$refs through a flattened top-level union", () => {
  it("keeps the root's $defs for a branch property's ref", () => {
    const schema = flattened({
      anyOf: [
        { type: "object", properties: { a: { $ref: "#/$defs/Thing" } } },
        { type: "object", properties: { b: { type: "string" } } },
      ],
      $defs: { Thing: THING },
    });
    expect(schema).toEqual({
      type: "object",
      $defs: { Thing: THING },
      properties: { a: { $ref: "#/$defs/Thing" }, b: { type: "string" } },
    });
  });

  it("keeps a definition referred to below its top (#/$defs/Thing/properties/x)", () => {
    const schema = flattened({
      oneOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { type: "object", properties: { x: { $ref: "#/$defs/Thing/properties/x" } } },
      ],
      $defs: { Thing: THING },
    });
    expect(schema.properties).toEqual({ a: { type: "string" }, x: { $ref: "#/$defs/Thing/properties/x" } });
    expect(schema.$defs).toEqual({ Thing: THING });
  });

  it("keeps a definition whose name the ref escapes (a~1b is a/b)", () => {
    const schema = flattened({
      anyOf: [{ properties: { a: { $ref: "#/definitions/a~1b" } } }, { properties: { b: { type: "string" } } }],
      definitions: { "a/b": THING },
    });
    expect(schema.definitions).toEqual({ "a/b": THING });
  });

  it("moves a branch's own $defs to the top, renaming one that clashes with the root's", () => {
    const local = { type: "string", enum: ["red", "green"] };
    const schema = flattened({
      anyOf: [
        {
          type: "object",
          $defs: { Thing: local },
          properties: { colour: { $ref: "#/anyOf/0/$defs/Thing" } },
        },
        { type: "object", properties: { b: { $ref: "#/$defs/Thing" } } },
      ],
      $defs: { Thing: THING },
    });
    expect(schema.$defs).toEqual({ Thing: THING, Thing_2: local });
    expect(schema.properties).toEqual({ colour: { $ref: "#/$defs/Thing_2" }, b: { $ref: "#/$defs/Thing" } });
  });

  it("copies a target the flattening moved (zod-to-json-schema's refs to a schema seen before)", () => {
    const point = { type: "object", properties: { x: { type: "number" }, y: { $ref: "#/$defs/Thing" } } };
    const schema = flattened({
      type: "object",
      anyOf: [
        { properties: { from: point }, required: ["from"] },
        { properties: { to: { $ref: "#/anyOf/0/properties/from" } }, required: ["to"] },
      ],
      $defs: { Thing: THING },
    });
    expect(schema.properties).toEqual({ from: point, to: { $ref: "#/$defs/anyOf_0_properties_from" } });
    expect(schema.$defs).toEqual({ Thing: THING, anyOf_0_properties_from: point });
  });

  it("copies the union itself for a ref to the whole schema (#)", () => {
    const published = {
      type: "object",
      oneOf: [
        { properties: { leaf: { type: "string" } }, required: ["leaf"] },
        { properties: { children: { type: "array", items: { $ref: "#" } } }, required: ["children"] },
      ],
    };
    const schema = flattened(published);
    expect(schema.properties).toEqual({
      leaf: { type: "string" },
      children: { type: "array", items: { $ref: "#/$defs/root" } },
    });
    // The copy's own ref to the whole schema points at the copy too.
    expect(schema.$defs).toEqual({ root: JSON.parse(JSON.stringify(published).replace('"#"', '"#/$defs/root"')) });
  });

  // "default", "enum", "examples"... are data keywords in a schema, but names in a map of names.
  const MODE = { type: "string", enum: ["a", "b"] };

  it("keeps the $defs a branch's property named default refers to", () => {
    const schema = flattened({
      anyOf: [
        { type: "object", properties: { default: { $ref: "#/$defs/Mode" } } },
        { type: "object", properties: { other: { type: "string" } } },
      ],
      $defs: { Mode: MODE },
    });
    expect(schema.properties).toEqual({ default: { $ref: "#/$defs/Mode" }, other: { type: "string" } });
    expect(schema.$defs).toEqual({ Mode: MODE });
  });

  it("keeps the definitions the schema's own property named enum refers to", () => {
    const schema = flattened({
      type: "object",
      properties: { enum: { $ref: "#/definitions/Mode" } },
      oneOf: [{ required: ["enum"] }, { properties: { x: { type: "string" } }, required: ["x"] }],
      definitions: { Mode: MODE },
    });
    expect(schema.properties).toEqual({ enum: { $ref: "#/definitions/Mode" }, x: { type: "string" } });
    expect(schema.definitions).toEqual({ Mode: MODE });
  });

  it("rewrites a ref into the union held by a definition named examples", () => {
    const from = { type: "object", properties: { x: { type: "number" } } };
    const schema = flattened({
      type: "object",
      anyOf: [{ properties: { from } }, { properties: { to: { $ref: "#/$defs/examples" } } }],
      $defs: { examples: { type: "object", properties: { p: { $ref: "#/anyOf/0/properties/from" } } } },
    });
    expect(schema.$defs).toEqual({
      examples: { type: "object", properties: { p: { $ref: "#/$defs/anyOf_0_properties_from" } } },
      anyOf_0_properties_from: from,
    });
  });
});
