// POST /v1/tools: the body is one arm per kind (an http tool needs its endpoint, a client tool has
// none of the http fields), and a refused body is worded exactly as before the arms: one problem
// at a time, the rules between fields once every field is valid.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

const schema = { type: "object" };
const http = (extra: Record<string, unknown> = {}) => ({
  kind: "http",
  name: "hook",
  description: "Calls the hook.",
  inputSchema: schema,
  endpoint: "https://tools.example.com/hook",
  ...extra,
});
const client = (extra: Record<string, unknown> = {}) => ({
  kind: "client",
  name: "pick",
  description: "Asks the person.",
  inputSchema: schema,
  ...extra,
});

/** Each body, and the whole message its 400 carries. */
const REFUSED: [string, unknown, string][] = [
  ["http without endpoint", http({ endpoint: undefined }), "endpoint: required for an http tool"],
  [
    "http without endpoint, bad name",
    http({ endpoint: undefined, name: "bad name!" }),
    "name: letters, digits, _ and - only, 1 to 64; endpoint: required for an http tool",
  ],
  [
    "http without endpoint, bad projectId",
    http({ endpoint: undefined, projectId: "x" }),
    "projectId: not a project id; endpoint: required for an http tool",
  ],
  ["http endpoint not a string", http({ endpoint: 5 }), "endpoint: Invalid input: expected string, received number"],
  ["unknown kind", http({ kind: "shell" }), 'kind: Invalid option: expected one of "http"|"client"'],
  ["no kind", http({ kind: undefined }), 'kind: Invalid option: expected one of "http"|"client"'],
  ["kind a number", client({ kind: 5 }), 'kind: Invalid option: expected one of "http"|"client"'],
  [
    "unknown kind, bad name",
    http({ kind: "shell", name: "bad name!" }),
    'kind: Invalid option: expected one of "http"|"client"; name: letters, digits, _ and - only, 1 to 64',
  ],
  [
    "unknown kind, surprise field",
    client({ kind: "shell", surprise: 1 }),
    'kind: Invalid option: expected one of "http"|"client"; unknown field surprise',
  ],
  ["client with endpoint", client({ endpoint: "https://tools.example.com/hook" }), "endpoint: only for an http tool"],
  ["client with explicit idempotent false", client({ idempotent: false }), "idempotent: only for an http tool"],
  [
    "client with headers and retries",
    client({ headers: { "X-A": "b" }, retries: 1 }),
    "headers: only for an http tool; retries: only for an http tool; retries: only an idempotent tool is retried; set idempotent: true or retries: 0",
  ],
  [
    "client with timeoutMs out of range",
    client({ timeoutMs: 99_999_999 }),
    "timeoutMs: Too big: expected number to be <=60000; timeoutMs: only for an http tool",
  ],
  [
    "client with endpoint, bad name",
    client({ endpoint: "https://tools.example.com/hook", name: "bad name!" }),
    "name: letters, digits, _ and - only, 1 to 64; endpoint: only for an http tool",
  ],
  [
    "client with endpoint, surprise field",
    client({ endpoint: "https://tools.example.com/hook", surprise: 1 }),
    "unknown field surprise; endpoint: only for an http tool",
  ],
  [
    "http retries without idempotent",
    http({ retries: 1 }),
    "retries: only an idempotent tool is retried; set idempotent: true or retries: 0",
  ],
  [
    "http retries with idempotent false",
    http({ retries: 2, idempotent: false }),
    "retries: only an idempotent tool is retried; set idempotent: true or retries: 0",
  ],
  [
    "http retries without idempotent, empty description",
    http({ retries: 1, description: "" }),
    "description: Too small: expected string to have >=1 characters; retries: only an idempotent tool is retried; set idempotent: true or retries: 0",
  ],
  [
    "http retries without idempotent, bad header",
    http({ retries: 1, headers: { "X-A": "a\nb" } }),
    "headers.X-A: no line breaks, control characters or characters past U+00FF (an HTTP header value), nor from U+0080 on: visible ASCII, space and tab only; retries: only an idempotent tool is retried; set idempotent: true or retries: 0",
  ],
  ["http retries out of range", http({ retries: 9, idempotent: true }), "retries: Too big: expected number to be <=3"],
  ["http surprise field", http({ surprise: 1 }), "unknown field surprise"],
  ["client surprise fields", client({ surprise: 1, other: 2 }), "unknown field surprise, other"],
  ["client missing its fields", { kind: "client" }, "name: required; description: required; inputSchema: required"],
  ["http missing its fields", { kind: "http" }, "name: required; description: required; inputSchema: required"],
  [
    "empty object",
    {},
    'kind: Invalid option: expected one of "http"|"client"; name: required; description: required; inputSchema: required',
  ],
  ["an array", [], "body: Invalid input: expected object, received array"],
  ["a string", "x", "body: Invalid input: expected object, received string"],
  ["null", null, "body: Invalid input: expected object, received null"],
];

describe("POST /v1/tools", () => {
  it("words every refused body as it always did", async () => {
    const key = await newTenant();
    const got: [string, number, string][] = [];
    for (const [label, body] of REFUSED) {
      const r = await api("POST", "/v1/tools", JSON.stringify(body), {
        key,
        headers: { "content-type": "application/json" },
      });
      got.push([label, r.status, r.json?.error?.message ?? r.text]);
    }
    expect(got).toEqual(REFUSED.map(([label, , message]) => [label, 400, message]));
  });

  it("takes either kind, an http tool with its defaults", async () => {
    const key = await newTenant();
    const h = await api("POST", "/v1/tools", http({ retries: 2, idempotent: true }), { key });
    expect(h.status, h.text).toBe(201);
    expect(h.json).toMatchObject({ kind: "http", endpoint: "https://tools.example.com/hook", retries: 2 });
    const plain = await api("POST", "/v1/tools", http({ name: "plain" }), { key });
    expect(plain.json).toMatchObject({ timeoutMs: 10_000, maxResponseBytes: 1_048_576, idempotent: false, retries: 0 });
    const c = await api("POST", "/v1/tools", client(), { key });
    expect(c.status, c.text).toBe(201);
    expect(c.json).toMatchObject({ kind: "client", name: "pick" });
    expect(c.json).not.toHaveProperty("endpoint");
  });
});
