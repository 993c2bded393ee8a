// Structured outputs on the offline model: the schema features the page lists as not supported are
// a 400 at the schema's path, for JSON outputs and strict tools alike; regex features it says "may"
// fail are taken; JSON outputs take no prefill. Source:
// https://platform.claude.com/docs/en/build-with-claude/structured-outputs
import { beforeEach, describe, expect, it } from "vitest";
import { resetOfflineCache } from "../../core/offline-model";
import { HELLO, postOnFixtureDay } from "./offline-model-client";

beforeEach(() => resetOfflineCache());

async function post(body: Record<string, unknown>) {
  const response = await postOnFixtureDay({ ...HELLO, ...body });
  const json = (await response.json()) as {
    stop_reason?: string;
    content?: unknown[];
    error?: { type: string; message: string };
  };
  return { status: response.status, json };
}

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});
const format = (schema: Record<string, unknown>) => ({ output_config: { format: { type: "json_schema", schema } } });
const strictTool = (schema: Record<string, unknown>) => ({
  tools: [{ name: "record", description: "Record", input_schema: schema, strict: true }],
});

/** Each unsupported feature and the refusal's detail (after the schema's path). */
const UNSUPPORTED: [string, Record<string, unknown>, string][] = [
  [
    "minLength",
    obj({ name: { type: "string", minLength: 3 } }),
    "For 'string' type, property 'minLength' is not supported",
  ],
  [
    "maxLength",
    obj({ name: { type: "string", maxLength: 3 } }),
    "For 'string' type, property 'maxLength' is not supported",
  ],
  ["minimum", obj({ n: { type: "integer", minimum: 1 } }), "For 'integer' type, property 'minimum' is not supported"],
  ["maximum", obj({ n: { type: "number", maximum: 9 } }), "For 'number' type, property 'maximum' is not supported"],
  [
    "exclusiveMinimum",
    obj({ n: { type: "number", exclusiveMinimum: 0 } }),
    "For 'number' type, property 'exclusiveMinimum' is not supported",
  ],
  [
    "multipleOf",
    obj({ n: { type: "integer", multipleOf: 2 } }),
    "For 'integer' type, property 'multipleOf' is not supported",
  ],
  [
    "recursive",
    obj(
      { root: { $ref: "#/$defs/node" } },
      {
        $defs: {
          node: obj({ value: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }),
        },
      },
    ),
    "Too many recursive definitions in schema",
  ],
  [
    "recursive to the root",
    obj({ value: { type: "string" }, next: { anyOf: [{ $ref: "#" }, { type: "null" }] } }),
    "Too many recursive definitions in schema",
  ],
  [
    "complex enum",
    obj({ pick: { enum: [{ a: 1 }, { b: 2 }] } }),
    "'enum' values must be strings, numbers, booleans or null: complex types within enums are not supported",
  ],
  [
    "external $ref",
    obj({ x: { $ref: "http://example.com/schema.json" } }),
    "External '$ref' is not supported: 'http://example.com/schema.json'",
  ],
  [
    "maxItems",
    obj({ list: { type: "array", items: { type: "string" }, maxItems: 3 } }),
    "For 'array' type, property 'maxItems' is not supported",
  ],
  [
    "minItems 5",
    obj({ list: { type: "array", items: { type: "string" }, minItems: 5 } }),
    "For 'array' type, 'minItems' values other than 0 or 1 are not supported",
  ],
];

/** What the page supports (or only says "may" fail): taken by both. */
const ACCEPTED: [string, Record<string, unknown>][] = [
  ["backreference", obj({ s: { type: "string", pattern: "^(a)\\1$" } })],
  ["lookahead", obj({ s: { type: "string", pattern: "^(?=a)a+$" } })],
  ["word boundary", obj({ s: { type: "string", pattern: "\\bword\\b" } })],
  ["minItems 1", obj({ list: { type: "array", items: { type: "string" }, minItems: 1 } })],
  ["primitive enum", obj({ pick: { enum: ["a", 1, true, null] } })],
  [
    "a definition used twice",
    obj(
      { home: { $ref: "#/$defs/place" }, work: { $ref: "#/$defs/place" } },
      { $defs: { place: obj({ city: { $ref: "#/$defs/city" } }), city: { type: "string" } } },
    ),
  ],
];

describe("structured outputs: unsupported schema features", () => {
  it("output_config.format: each unsupported feature is a 400 at the schema's path; supported ones are taken", async () => {
    for (const [name, schema, detail] of UNSUPPORTED) {
      const { status, json } = await post(format(schema));
      expect({ name, status, type: json.error?.type }).toEqual({ name, status: 400, type: "invalid_request_error" });
      expect(json.error?.message).toContain(`output_config.format.schema: ${detail}`);
    }
    for (const [name, schema] of ACCEPTED)
      expect({ name, status: (await post(format(schema))).status }).toEqual({ name, status: 200 });
  });

  it("strict tool input_schema: each unsupported feature is a 400 at the tool's schema path; a non-strict tool may carry them", async () => {
    for (const [name, schema, detail] of UNSUPPORTED) {
      const { status, json } = await post(strictTool(schema));
      expect({ name, status }).toEqual({ name, status: 400 });
      expect(json.error?.message).toContain(`tools.0.custom.input_schema: ${detail}`);
    }
    for (const [name, schema] of ACCEPTED)
      expect({ name, status: (await post(strictTool(schema))).status }).toEqual({ name, status: 200 });
    const loose = await post({
      tools: [{ name: "record", description: "Record", input_schema: obj({ n: { type: "integer", minimum: 1 } }) }],
    });
    expect(loose.status).toBe(200);
  });
});

describe("structured outputs: prefill", () => {
  const prefilled = [
    { role: "user", content: "Name a river." },
    { role: "assistant", content: '{"name": "' },
  ];

  it("a final assistant message with output_config.format is refused, even on a model that takes prefill; a pause_turn reply sent back is not a prefill", async () => {
    const alone = await post({ model: "claude-haiku-4-5", messages: prefilled });
    expect(alone.status).toBe(200);
    const { status, json } = await post({
      model: "claude-haiku-4-5",
      messages: prefilled,
      ...format(obj({ name: { type: "string" } })),
    });
    expect(status).toBe(400);
    expect(json.error?.message).toContain(
      "When using output format, pre-filling the `assistant` response is not supported",
    );
    const tools = [{ type: "web_search_20250305", name: "web_search" }];
    const user = { role: "user", content: "Find the tides.\n@web-search harbor tides\n@stop pause_turn" };
    const schema = format(obj({ tide: { type: "string" } }));
    const paused = await post({ model: "claude-haiku-4-5", tools, messages: [user], ...schema });
    expect(paused.json.stop_reason).toBe("pause_turn");
    const resumed = await post({
      model: "claude-haiku-4-5",
      tools,
      messages: [user, { role: "assistant", content: paused.json.content }],
      ...schema,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.stop_reason).toBe("end_turn");
  });
});
