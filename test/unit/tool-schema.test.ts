// Tool input schemas as the Messages API takes them: "type": "object" and no oneOf/anyOf/allOf at
// the top level. A tenant's schema (registered or a turn's client tool) is refused with the reason;
// an MCP server's is rewritten into one flat object schema, the combinations told in the description.
import { describe, expect, it, vi } from "vitest";
import { mcpToolDefinition } from "../../agent/tools/mcp-tools";
import { httpToolDefinition, registeredClientTool } from "../../agent/tools/registered-tools";
import type { ToolRow } from "../../services/tools/tool-store";
import { turnToolsSchema } from "../../core/client-tools";
import { inputSchemaProblem } from "../../core/tenant-tool-rules";
import { modelToolSchema, originalArguments, schemaProblem } from "../../core/tool-schema";
import { describeZodError } from "../../core/validation";

// The arguments each kind of tool is called with, as its caller hands them on.
const called: Record<string, unknown>[] = [];
vi.mock("../../services/mcp/call", () => ({
  callMcpTool: async (_env: unknown, call: { args: Record<string, unknown> }) => (
    called.push(call.args), { content: "ok" }
  ),
}));
vi.mock("../../services/tools/http-call", () => ({
  callHttpTool: async (_tool: unknown, call: { input: Record<string, unknown> }) => (
    called.push(call.input), { content: "ok" }
  ),
}));
vi.mock("../../services/tools/tool-store", async (orig) => ({
  ...(await orig<typeof import("../../services/tools/tool-store")>()),
  openHeaders: async () => ({}),
  // An HTTP tool's call re-reads its row: the one the "list" tool below was built from.
  getTool: async (_db: unknown, _tenantId: unknown, id: string) => ({ id, name: "list", kind: "http" }),
}));

/** The definition the model gets for a tool of MCP server `server`. */
const mcpTool = (
  server: string,
  tool: { mcpName: string; description: string; inputSchema: Record<string, unknown> },
) =>
  mcpToolDefinition(
    { env: {} as Env, tenantId: "t" },
    { id: "mcp_1", name: server } as Parameters<typeof mcpToolDefinition>[1],
    { name: `mcp__${server}__${tool.mcpName}`, ...tool },
  );

// A REST API's query parameters as an MCP server publishes them: names the Messages API refuses.
const REST_KEYS = {
  type: "object",
  properties: {
    "filter[id]": { type: "string" },
    filter_id_: { type: "string" },
    "Account Number": { type: "string" },
    [`${"x".repeat(70)}`]: { type: "integer" },
    "page.size": { type: "integer" },
  },
  required: ["filter[id]", "page.size"],
};

// What a Python MCP server (FastMCP + pydantic) publishes for `def draw(shape: Circle | Square)`.
const PYDANTIC_UNION = {
  type: "object",
  $defs: {
    Circle: {
      type: "object",
      title: "Circle",
      properties: { kind: { const: "circle", type: "string" }, radius: { type: "number", description: "in cm" } },
      required: ["kind", "radius"],
      additionalProperties: false,
    },
    Square: {
      type: "object",
      title: "Square",
      properties: { kind: { const: "square", type: "string" }, side: { type: "number" } },
      required: ["kind", "side"],
      additionalProperties: false,
    },
  },
  oneOf: [{ $ref: "#/$defs/Circle" }, { $ref: "#/$defs/Square" }],
};

// A TypeScript server's zod .or(): either a path or a url, plus a shared option.
const EITHER_OR = {
  type: "object",
  properties: { encoding: { type: "string", enum: ["utf8", "base64"] } },
  required: ["encoding"],
  anyOf: [
    { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    { type: "object", properties: { url: { type: "string", format: "uri" } }, required: ["url"] },
  ],
};

// allOf of two mixins: every branch applies, so every required field stays required.
const MIXINS = {
  type: "object",
  allOf: [
    { properties: { query: { type: "string" } }, required: ["query"] },
    { properties: { limit: { type: "integer", minimum: 1 } }, required: ["limit"] },
    { properties: { limit: { type: "integer", maximum: 100 } } },
  ],
};

describe("schemaProblem (what the API refuses)", () => {
  it("refuses a top-level union, a non-object schema and malformed properties", () => {
    expect(schemaProblem(PYDANTIC_UNION)).toMatch(
      /^oneOf at the top level: the Messages API does not support oneOf, allOf, or anyOf at the top level/,
    );
    expect(schemaProblem({ type: "object", anyOf: [], allOf: [] })).toMatch(/^anyOf, allOf at the top level/);
    expect(schemaProblem({ type: "string" })).toMatch(/"type": "object"/);
    expect(schemaProblem({ type: "object", properties: [] })).toMatch(/"properties" must be an object/);
    expect(
      schemaProblem({ type: "object", properties: { a: { anyOf: [{ type: "string" }, { type: "null" }] } } }),
    ).toBeNull();
  });

  it("refuses a top-level argument name the API refuses (brackets, spaces, over 64), not a nested one", () => {
    expect(schemaProblem(REST_KEYS)).toBe(
      'property "filter[id]": the Messages API takes argument names of 1 to 64 letters, digits, "_", "." or "-" (^[a-zA-Z0-9_.-]{1,64}$)',
    );
    expect(schemaProblem({ type: "object", properties: { [`${"y".repeat(65)}`]: {} } })).toMatch(/^property "y{65}"/);
    expect(schemaProblem({ type: "object", properties: { "page.size": {}, "a-b_c": {} } })).toBeNull();
    expect(
      schemaProblem({
        type: "object",
        properties: { filter: { type: "object", properties: { "Account Number": {} } } },
      }),
    ).toBeNull();
    const r = turnToolsSchema.safeParse([{ name: "list", description: "", input_schema: REST_KEYS }]);
    expect(describeZodError(r.error!)).toMatch(/^0\.input_schema: property "filter\[id\]"/);
  });

  it("is the rule of registered tools and of a turn's client tools, naming the field", () => {
    expect(inputSchemaProblem(EITHER_OR)).toMatch(/^anyOf at the top level/);
    const r = turnToolsSchema.safeParse([{ name: "draw", description: "", input_schema: PYDANTIC_UNION }]);
    expect(r.success).toBe(false);
    expect(describeZodError(r.error!)).toMatch(/^0\.input_schema: oneOf at the top level/);
  });
});

describe("modelToolSchema (an MCP server's schema rewritten)", () => {
  it("leaves a schema the API takes exactly as it is", () => {
    const plain = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
    expect(modelToolSchema(plain)).toEqual({ schema: plain, note: null });
  });

  it("flattens a pydantic oneOf of $refs: a discriminator enum, what both require, the combinations in the note", () => {
    const { schema, note } = modelToolSchema(PYDANTIC_UNION);
    expect(schemaProblem(schema)).toBeNull();
    // The branches are inlined, so their definitions are left out.
    expect(schema).toEqual({
      type: "object",
      properties: {
        kind: { type: "string", enum: ["circle", "square"] },
        radius: { type: "number", description: "in cm" },
        side: { type: "number" },
      },
      required: ["kind"],
    });
    expect(note).toBe(
      'Accepts exactly one of these argument combinations: (1) Circle: kind="circle", radius; (2) Square: kind="square", side.',
    );
  });

  it("keeps the schema's own properties and required, adding the alternatives", () => {
    const { schema, note } = modelToolSchema(EITHER_OR);
    expect(schemaProblem(schema)).toBeNull();
    expect(schema).toEqual({
      type: "object",
      properties: {
        encoding: EITHER_OR.properties.encoding,
        path: { type: "string" },
        url: { type: "string", format: "uri" },
      },
      required: ["encoding"],
    });
    expect(note).toBe("Accepts one or more of these argument combinations: (1) path; (2) url.");
  });

  it("keeps the definitions the flat schema still refers to", () => {
    const nested = {
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "number" } } }, Unused: { type: "string" } },
      anyOf: [
        { properties: { at: { $ref: "#/$defs/Point" } }, required: ["at"] },
        { properties: { id: { type: "string" } }, required: ["id"] },
      ],
    };
    expect(modelToolSchema(nested).schema).toEqual({
      type: "object",
      $defs: { Point: nested.$defs.Point },
      properties: { at: { $ref: "#/$defs/Point" }, id: { type: "string" } },
    });
  });

  it("merges allOf exactly: every branch's required, differing constraints as an allOf", () => {
    const { schema, note } = modelToolSchema(MIXINS);
    expect(schema).toEqual({
      type: "object",
      properties: {
        query: { type: "string" },
        limit: {
          allOf: [
            { type: "integer", minimum: 1 },
            { type: "integer", maximum: 100 },
          ],
        },
      },
      required: ["query", "limit"],
    });
    expect(note).toBeNull();
  });

  it("types an untyped object schema, and offers a non-object one without arguments, saying so", () => {
    expect(modelToolSchema({ properties: { a: { type: "string" } } })).toEqual({
      schema: { type: "object", properties: { a: { type: "string" } } },
      note: null,
    });
    expect(modelToolSchema({ type: "string" })).toEqual({
      schema: { type: "object", properties: {} },
      note: 'Its input schema is "string", not an object of named arguments, so it is offered without arguments.',
    });
  });

  it("renames top-level argument names the API refuses, and the call gets the tool's own names back", async () => {
    const { schema, renamed, note } = modelToolSchema(REST_KEYS);
    expect(note).toBeNull();
    expect(Object.keys(schema.properties as object)).toEqual([
      "filter_id__2",
      "filter_id_",
      "Account_Number",
      "x".repeat(64),
      "page.size",
    ]);
    expect(schema.required).toEqual(["filter_id__2", "page.size"]);
    expect(schemaProblem(schema)).toBeNull();
    expect(renamed).toEqual({
      filter_id__2: "filter[id]",
      Account_Number: "Account Number",
      ["x".repeat(64)]: "x".repeat(70),
    });
    const input = { filter_id__2: "7", filter_id_: "8", Account_Number: "A-1", "page.size": 5 };
    const original = { "filter[id]": "7", filter_id_: "8", "Account Number": "A-1", "page.size": 5 };
    expect(originalArguments(input, renamed)).toEqual(original);
    // Through each kind of tool that takes a published or stored schema: MCP, and an HTTP tool stored before the rule.
    const mcp = mcpTool("rest", { mcpName: "list", description: "List.", inputSchema: REST_KEYS });
    const http = httpToolDefinition(
      {
        id: "tool_2",
        name: "list",
        description: "List.",
        inputSchema: JSON.stringify(REST_KEYS),
        kind: "http",
      } as ToolRow,
      {} as Env,
    );
    const ctx = { conversationId: "c", turnId: "t", callId: "k" } as Parameters<typeof http.run>[1];
    called.length = 0;
    await mcp.run(input, ctx as Parameters<typeof mcp.run>[1]);
    await http.run(input, ctx);
    expect(called).toEqual([original, original]);
    expect(schemaProblem(mcp.jsonSchema)).toBeNull();
    expect(schemaProblem(http.jsonSchema)).toBeNull();
  });

  it("is deterministic: the same schema gives the same bytes", () => {
    expect(JSON.stringify(modelToolSchema(structuredClone(PYDANTIC_UNION)))).toBe(
      JSON.stringify(modelToolSchema(PYDANTIC_UNION)),
    );
  });

  it("is what an MCP tool's definition hands the model", () => {
    const def = mcpTool("shapes", { mcpName: "draw", description: "Draw a shape.", inputSchema: PYDANTIC_UNION });
    expect(schemaProblem(def.jsonSchema)).toBeNull();
    expect(def.description).toBe(
      'Draw a shape. (tool "draw" of MCP server "shapes")\nAccepts exactly one of these argument combinations: (1) Circle: kind="circle", radius; (2) Square: kind="square", side.',
    );
  });

  it("serves a tenant tool stored before the rule flattened, rather than failing every request", () => {
    const row = {
      id: "tool_1",
      name: "fetch_doc",
      description: "Fetches a document.",
      inputSchema: JSON.stringify(EITHER_OR),
      kind: "http",
      endpoint: "https://tools.example/doc",
    } as ToolRow;
    for (const def of [httpToolDefinition(row, {} as Env), registeredClientTool(row)]) {
      expect(schemaProblem(def.jsonSchema)).toBeNull();
      expect(def.description).toBe(
        "Fetches a document.\nAccepts one or more of these argument combinations: (1) path; (2) url.",
      );
    }
  });
});
