// A null where the body has a field (top level, nested in a config, in a block, in a strict schema)
// never crashes the offline model: each request is answered with a 200 or a well-formed 400
// invalid_request_error, on Messages (streamed and not) and on count_tokens. A throw would reach the
// SDK as a retried "Connection error." (as `system: null` once did, from the system-prompt parsing).
import { beforeEach, describe, expect, it } from "vitest";
import { handleMessagesRequest, resetOfflineCache } from "../../core/offline-model";

beforeEach(() => resetOfflineCache());

const DEC_3 = Date.UTC(2026, 11, 3, 12);
/** The first request loads the tokenizer table: seconds on a loaded machine. */
const SLOW = 30_000;
const TOOL = { name: "read_file", description: "Read a file", input_schema: { type: "object", properties: {} } };
const STRICT = {
  ...TOOL,
  strict: true,
  input_schema: { type: "object", properties: { path: { type: "string" } }, additionalProperties: false },
};

const FIELDS = [
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "metadata",
  "output_config",
  "stop_sequences",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "service_tier",
  "cache_control",
  "container",
  "speed",
  "inference_geo",
  "context_management",
  "mcp_servers",
];

/** Nulls one level down, each with what it needs around it. */
const NESTED: Record<string, Record<string, unknown>> = {
  "system block text": { system: [{ type: "text", text: null }] },
  "system block": { system: [null] },
  "message content": { messages: [{ role: "user", content: null }] },
  "message block": { messages: [{ role: "user", content: [null] }] },
  "text block's text": { messages: [{ role: "user", content: [{ type: "text", text: null }] }] },
  "image source": { messages: [{ role: "user", content: [{ type: "image", source: null }] }] },
  "document source content": {
    messages: [{ role: "user", content: [{ type: "document", source: { type: "content", content: null } }] }],
  },
  "document source content block": {
    messages: [{ role: "user", content: [{ type: "document", source: { type: "content", content: [null] } }] }],
  },
  "tool in tools": { tools: [null] },
  "tool's input_schema": { tools: [{ ...TOOL, input_schema: null }] },
  "strict tool's properties": { tools: [{ ...STRICT, input_schema: { ...STRICT.input_schema, properties: null } }] },
  "strict tool's required": { tools: [{ ...STRICT, input_schema: { ...STRICT.input_schema, required: null } }] },
  "strict tool's property": {
    tools: [{ ...STRICT, input_schema: { ...STRICT.input_schema, properties: { a: null } } }],
  },
  "tool_choice type": { tools: [TOOL], tool_choice: { type: null } },
  "thinking type": { thinking: { type: null } },
  "output_config effort": { output_config: { effort: null } },
  "output_config format": { output_config: { format: null } },
  "output format schema": { output_config: { format: { type: "json_schema", schema: null } } },
  "metadata user_id": { metadata: { user_id: null } },
};

async function send(body: Record<string, unknown>, path: string): Promise<Response> {
  const messages = path === "/v1/messages";
  return handleMessagesRequest(
    new Request(`https://offline-model.invalid${path}`, {
      method: "POST",
      body: JSON.stringify({
        model: "claude-sonnet-5-5",
        ...(messages ? { max_tokens: 1024 } : {}),
        messages: [{ role: "user", content: "Hello." }],
        ...body,
      }),
    }),
    { now: () => DEC_3 },
  );
}

/** A 200 (its whole body read, a stream to its end) or a 400 in the API's error shape. */
async function expectAnswered(body: Record<string, unknown>, path: string): Promise<void> {
  const response = await send(body, path);
  const text = await response.text();
  expect([200, 400], text).toContain(response.status);
  if (response.status === 200) return;
  const json = JSON.parse(text) as { type: string; error: { type: string; message: string }; request_id: string };
  expect(json.type).toBe("error");
  expect(json.error.type).toBe("invalid_request_error");
  expect(json.error.message).toMatch(/\S/);
  expect(json.request_id).toBe(response.headers.get("request-id"));
}

describe("null fields never crash the offline model", () => {
  for (const field of FIELDS) {
    it(
      `${field}: null`,
      async () => {
        await expectAnswered({ [field]: null }, "/v1/messages");
        if (field !== "stream") await expectAnswered({ [field]: null, stream: true }, "/v1/messages");
        await expectAnswered({ [field]: null }, "/v1/messages/count_tokens");
      },
      SLOW,
    );
  }

  for (const [name, body] of Object.entries(NESTED)) {
    it(
      `${name}: null`,
      async () => {
        await expectAnswered(body, "/v1/messages");
        await expectAnswered({ ...body, stream: true }, "/v1/messages");
        await expectAnswered(body, "/v1/messages/count_tokens");
      },
      SLOW,
    );
  }

  it(
    "system: null is the schema's type error naming system",
    async () => {
      const response = await send({ system: null }, "/v1/messages");
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: { message: string } };
      expect(json.error.message).toBe("system: Input should be a valid string or a valid list");
    },
    SLOW,
  );
});
