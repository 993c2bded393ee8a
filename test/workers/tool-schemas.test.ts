// Tool JSON Schemas are derived from the zod schemas that validate the calls: the model is shown
// the limits the tools enforce. Checked on what a request carries (/replay) and, for every tool,
// by calling it just past each limit its schema states: the validator must refuse exactly there.
import { describe, expect, it } from "vitest";
import { toolRegistry } from "../../agent/tools";
import { api, createConversation } from "./helpers";

/** The JSON Schema subset the tools' input schemas use. */
type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  maxLength?: number;
  maximum?: number;
  minimum?: number;
  maxItems?: number;
  [k: string]: unknown;
};

/** A value for each required property that the validator accepts (the ids are well formed). */
function minimalCall(schema: Schema): Record<string, unknown> {
  const ids: Record<string, string> = {
    attachment_id: "att_01M8XB306NZEEYSE16JBKV2N5X",
    id: "mem_01M8XB306NZEEYSE16JBKV2N5X",
  };
  const out: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const p = schema.properties![name];
    out[name] = ids[name] ?? (p.type === "integer" ? (p.minimum ?? 1) : "x");
  }
  return out;
}

describe("tool schemas", () => {
  it("carry the validators' limits in the request the model gets", async () => {
    const id = await createConversation();
    const tools = (await api("GET", `/v1/conversations/${id}/replay`)).json.tools;
    const search = tools.find((t) => t.name === "memory_search")!.input_schema;
    expect(search).toEqual({
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500, description: "words or exact identifiers to find" },
        limit: { type: "integer", minimum: 1, maximum: 20, description: "default 5" },
        said: {
          type: "string",
          enum: ["user", "assistant"],
          description:
            "whose words to look for: the person's (default) or yours; unset, a query like 'you suggested ...' looks for yours",
        },
      },
      required: ["query"],
      additionalProperties: false,
    });
    // Nothing the model would pay for without learning anything.
    expect(JSON.stringify(tools)).not.toMatch(/\$schema|9007199254740991/);
  });

  it("state exactly where each tool's validator refuses: one past every stated limit", () => {
    const all = toolRegistry.all();
    const schemas = toolRegistry.schemasFor(all.map((t) => t.name));
    let limits = 0;
    for (const { name, input_schema } of schemas) {
      const tool = all.find((t) => t.name === name)!;
      const schema = input_schema as Schema;
      const base = minimalCall(schema);
      expect(tool.input.safeParse(base).success, `${name} ${JSON.stringify(base)}`).toBe(true);
      expect(tool.input.safeParse({ ...base, not_a_field: 1 }).success, `${name} extra field`).toBe(
        schema.additionalProperties !== false,
      );
      for (const [field, p] of Object.entries(schema.properties ?? {})) {
        const past: unknown[] = [];
        if (p.maxLength !== undefined) past.push("y".repeat(p.maxLength + 1));
        if (p.maximum !== undefined) past.push(p.maximum + 1);
        if (p.minimum !== undefined) past.push(p.minimum - 1);
        if (p.maxItems !== undefined) past.push(Array.from({ length: p.maxItems + 1 }, () => "t"));
        for (const value of past) {
          limits++;
          expect(
            tool.input.safeParse({ ...base, [field]: value }).success,
            `${name}.${field} = ${JSON.stringify(value).slice(0, 40)}`,
          ).toBe(false);
        }
      }
    }
    // The derivation states limits the hand-written schemas never did (string lengths above all).
    expect(limits).toBeGreaterThan(25);
  });
});
