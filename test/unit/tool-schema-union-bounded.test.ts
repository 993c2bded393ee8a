// Unions nested through $refs repeat their branches at every level: a 1.9 KB MCP schema of four
// levels of 20 refs was walked 168,000 times, and its note (a line per union reached) grew to
// 1.7 MB in the tool's description, past any prompt once the tool was active. The walk has a
// budget, the note's lines are said once and cut, and an MCP tool's cap holds for what is sent.
// The budget first counted every visit of a shared target (50 actions sharing one 20-way target
// were offered without arguments) and the cut took the schema's own line (a 45-action tool lost
// actions 31 to 45): a target is flattened once per depth and counted once, and the own line is whole.
import { describe, expect, it } from "vitest";
import { mcpToolDefinition } from "../../agent/tools/mcp-tools";
import { INPUT_SCHEMA_MAX_BYTES } from "../../core/tenant-tool-rules";
import { modelToolSchema, schemaProblem, type JsonSchema } from "../../core/tool-schema";
import { MAX_BRANCHES, NOTE_MAX_CHARS } from "../../core/tool-schema-union";

/** Every read of the leaf's properties, each time the walk reaches it. */
let leafReads = 0;

/** `levels` definitions, each a union of `n` refs to the next, the last an object: n^levels paths. */
function nested(n: number, levels = 4): JsonSchema {
  const leaf: JsonSchema = { type: "object" };
  Object.defineProperty(leaf, "properties", {
    enumerable: true,
    get: () => (leafReads++, { x: { type: "string" } }),
  });
  const $defs: JsonSchema = { [`D${levels}`]: leaf };
  for (let l = levels - 1; l >= 1; l--)
    $defs[`D${l}`] = { anyOf: Array.from({ length: n }, () => ({ $ref: `#/$defs/D${l + 1}` })) };
  return { type: "object", anyOf: Array.from({ length: n }, () => ({ $ref: "#/$defs/D1" })), $defs };
}

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v)).byteLength;

describe("a schema of unions nested through $refs", () => {
  it("four levels of 20 refs (1.9 KB): a bounded walk, each definition read once, a one-line note", () => {
    const schema = nested(20);
    expect(bytes(schema)).toBeLessThan(2_000);
    leafReads = 0;
    const { schema: sent, note } = modelToolSchema(schema);
    // Every path was walked before: 160,000 visits of the leaf, two reads each. Now the leaf is
    // flattened once (the rest are reads of the declared schema, to check and copy it).
    expect(leafReads).toBeLessThan(100);
    expect(sent).toEqual({ type: "object", properties: { x: { type: "string" } } });
    expect(note).toBe(
      `Accepts one or more of these argument combinations: ${Array.from({ length: 20 }, (_, i) => `(${i + 1}) x`).join("; ")}.`,
    );
  });

  it("past the budget of distinct branches, offered without arguments", () => {
    const schema: JsonSchema = {
      type: "object",
      oneOf: Array.from({ length: MAX_BRANCHES + 1 }, (_, i) => ({
        type: "object",
        properties: { [`a${i}`]: { type: "string" } },
      })),
    };
    expect(modelToolSchema(schema)).toEqual({
      schema: { type: "object", properties: {} },
      note: `Its input schema's unions have more than ${MAX_BRANCHES} branches in all (counted through their $refs), too many to flatten, so it is offered without arguments.`,
    });
  });

  it("50 actions sharing one 20-way target (70 branches declared) flatten: the target counts once", () => {
    const target: JsonSchema = {
      anyOf: Array.from({ length: 20 }, (_, j) => ({
        type: "object",
        properties: { [`t${j}`]: { type: "string" } },
        required: [`t${j}`],
      })),
    };
    const schema: JsonSchema = {
      type: "object",
      $defs: { Target: target },
      oneOf: Array.from({ length: 50 }, (_, i) => ({
        type: "object",
        properties: { op: { const: `op${i}` } },
        required: ["op"],
        allOf: [{ $ref: "#/$defs/Target" }],
      })),
    };
    // 50 × 20 visits of the target's branches went past the budget: offered without arguments.
    const { schema: sent, note } = modelToolSchema(schema);
    expect(schemaProblem(sent)).toBeNull();
    expect(Object.keys(sent.properties as JsonSchema)).toEqual([
      "op",
      ...Array.from({ length: 20 }, (_, j) => `t${j}`),
    ]);
    expect((sent.properties as JsonSchema).op).toEqual({ enum: Array.from({ length: 50 }, (_, i) => `op${i}`) });
    expect(sent.required).toEqual(["op"]);
    const lines = (note ?? "").split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `Accepts exactly one of these argument combinations: ${Array.from({ length: 50 }, (_, i) => `(${i + 1}) op="op${i}"`).join("; ")}.`,
    );
    expect(lines[1]).toBe(
      `Accepts one or more of these argument combinations: ${Array.from({ length: 20 }, (_, j) => `(${j + 1}) t${j}`).join("; ")}.`,
    );
    // A part reused by 50 branches is left as it was: a second rewrite gives the same.
    expect(modelToolSchema(schema)).toEqual({ schema: sent, note });
  });

  it("within the budget, each union's line is said once: four levels of 3 refs give one line", () => {
    const { schema, note } = modelToolSchema(nested(3));
    expect(schema).toEqual({ type: "object", properties: { x: { type: "string" } } });
    expect(schemaProblem(schema)).toBeNull();
    // 40 unions, all telling the same combinations: 40 lines before.
    expect(note).toBe("Accepts one or more of these argument combinations: (1) x; (2) x; (3) x.");
  });

  it("an MCP tool whose schema was 1.9 KB stays small in the description and the schema", () => {
    const def = mcpToolDefinition(
      { env: {} as Env, tenantId: "t" },
      { id: "mcp_1", name: "bomb" } as Parameters<typeof mcpToolDefinition>[1],
      { name: "mcp__bomb__echo", mcpName: "echo", description: "echo", inputSchema: nested(20) },
    );
    expect(def.description.length).toBeLessThan(400);
    expect(bytes(def.jsonSchema)).toBeLessThan(100);
  });
});

describe("the note on a flattened union", () => {
  it("tells the schema's own combinations first, then its branches' up to the cap, and counts the rest", () => {
    // 40 branches, each a union of two with arguments of their own: 41 distinct lines, ~3,700 characters.
    const schema: JsonSchema = {
      type: "object",
      anyOf: Array.from({ length: 40 }, (_, i) => ({
        type: "object",
        title: `Mode${i}`,
        anyOf: ["l", "r"].map((side) => ({
          type: "object",
          properties: { [`${side}_${i}`]: { type: "string" } },
          required: [`${side}_${i}`],
        })),
      })),
    };
    const { schema: sent, note } = modelToolSchema(schema);
    expect(schemaProblem(sent)).toBeNull();
    expect(Object.keys(sent.properties as JsonSchema)).toHaveLength(80);
    const lines = (note ?? "").split("\n");
    expect(lines[0]).toMatch(
      /^Accepts one or more of these argument combinations: \(1\) Mode0: l_0, r_0; .*\(40\) Mode39: l_39, r_39\.$/,
    );
    expect(lines[1]).toBe("Accepts one or more of these argument combinations: (1) l_0; (2) r_0.");
    expect(lines.length).toBeLessThan(41);
    const shown = lines.slice(0, -1).join("\n");
    expect(shown.length).toBeLessThanOrEqual(NOTE_MAX_CHARS);
    expect(lines.at(-1)).toBe(`… and ${41 - (lines.length - 1)} more lines on nested unions, left out.`);
  });

  it("keeps the schema's own line whole past the cap, and leaves its branches' lines out", () => {
    // 300 branches, one of them a union of its own: the own line is 4,300 characters.
    const schema: JsonSchema = {
      type: "object",
      oneOf: Array.from({ length: 300 }, (_, i) => ({
        type: "object",
        properties: { [`arg_${i}`]: { type: "integer" } },
        required: [`arg_${i}`],
        ...(i === 0 ? { anyOf: [{ type: "object" }, { type: "object" }] } : {}),
      })),
    };
    const { note } = modelToolSchema(schema);
    const lines = (note ?? "").split("\n");
    expect(lines[0].length).toBeGreaterThan(NOTE_MAX_CHARS);
    expect(lines[0]).toMatch(
      /^Accepts exactly one of these argument combinations: \(1\) arg_0; \(2\) arg_1; .*; \(300\) arg_299\.$/,
    );
    expect(lines.slice(1)).toEqual(["… and 1 more line on nested unions, left out."]);
  });

  it("an MCP tool of 45 actions (15 KB) tells every action's arguments in its description", () => {
    const desc = (s: string) => `${s} `.repeat(12).trim();
    const inputSchema: JsonSchema = {
      type: "object",
      oneOf: Array.from({ length: 45 }, (_, i) => ({
        type: "object",
        title: `Action${i}`,
        properties: {
          action: { const: `action_number_${i}`, description: "Which action" },
          [`field_${i}_0`]: { type: "string", description: desc("f0") },
          [`field_${i}_1`]: { type: "string", description: desc("f1") },
        },
        required: ["action", `field_${i}_0`, `field_${i}_1`],
      })),
    };
    expect(bytes(inputSchema)).toBeLessThan(INPUT_SCHEMA_MAX_BYTES);
    const def = mcpToolDefinition(
      { env: {} as Env, tenantId: "t" },
      { id: "mcp_1", name: "omni" } as Parameters<typeof mcpToolDefinition>[1],
      { name: "mcp__omni__do", mcpName: "do", description: "Does things.", inputSchema },
    );
    expect(Object.keys(def.jsonSchema?.properties as JsonSchema)).toHaveLength(1 + 45 * 2);
    const line = def.description.split("\n")[1];
    // Cut at 2,000 characters before: action 31 on were not told.
    expect(line.length).toBeGreaterThan(NOTE_MAX_CHARS);
    for (let i = 0; i < 45; i++)
      expect(line).toContain(`(${i + 1}) Action${i}: action="action_number_${i}", field_${i}_0, field_${i}_1`);
    expect(line).toMatch(/field_44_1\.$/);
    expect(def.description.split("\n")).toHaveLength(2);
  });
});

describe("an MCP tool's schema cap", () => {
  it("holds for the schema as sent: a rewrite past 16 KiB is offered without arguments", () => {
    // A branch's property referred to from another branch is copied into $defs by the rewrite: the
    // 8.3 KB declared schema is sent twice over.
    const big = { type: "string", description: "d".repeat(8_200) };
    const inputSchema: JsonSchema = {
      type: "object",
      anyOf: [
        { type: "object", properties: { big } },
        { type: "object", properties: { copy: { $ref: "#/anyOf/0/properties/big" } } },
      ],
    };
    expect(bytes(inputSchema)).toBeLessThan(INPUT_SCHEMA_MAX_BYTES);
    expect(bytes(modelToolSchema(inputSchema).schema)).toBeGreaterThan(INPUT_SCHEMA_MAX_BYTES);
    const def = mcpToolDefinition(
      { env: {} as Env, tenantId: "t" },
      { id: "mcp_1", name: "docs" } as Parameters<typeof mcpToolDefinition>[1],
      { name: "mcp__docs__get", mcpName: "get", description: "Gets a document.", inputSchema },
    );
    expect(def.jsonSchema).toEqual({ type: "object", properties: {} });
    expect(def.description).toMatch(
      new RegExp(
        `^Gets a document\\. \\(tool "get" of MCP server "docs"\\)\\nIts input schema is \\d+ bytes as sent \\(rewritten for the API, with its note\\), more than the ${INPUT_SCHEMA_MAX_BYTES} a tool's schema may take, so it is offered without arguments\\.$`,
      ),
    );
  });
});
