// GET /openapi.json: public, one operation per registered route, input described by the schemas
// that validate it (the validity against the OpenAPI 3.1 schema is checked in Node:
// test/unit/openapi-document.test.ts, on the committed copy this test keeps in step).
import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { jsonOrUndefined } from "../json-body";
import { api } from "./helpers";
import { registeredRoutes, ROUTES } from "./hostile-fixtures";

const fromHono = (path: string) => path.replace(/:(\w+)/g, "{$1}");

/** The parts of an OpenAPI 3.1 document this test reads. */
interface SchemaObject {
  $ref?: string;
  additionalProperties?: unknown;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  const?: unknown;
  description?: string;
}
type Content = Record<string, { schema: SchemaObject }>;
interface Operation {
  summary?: string;
  description?: string;
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Content };
  responses: Record<string, { content?: Content; $ref?: string }>;
  "x-websocket"?: unknown;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, SchemaObject> };
}
/** The served document (GET /openapi.json, no key). */
const served = async () =>
  jsonOrUndefined((await api("GET", "/openapi.json", undefined, { key: "" })).text) as OpenApiDocument;
/** A schema, or the named one it points at. */
const resolve = (json: OpenApiDocument, schema: SchemaObject | undefined) =>
  schema?.$ref ? json.components.schemas[schema.$ref.split("/").pop()!] : schema;
/** A body's object shapes: the one object, or each arm of a union. */
const arms = (json: OpenApiDocument, schema: SchemaObject | undefined): SchemaObject[] => {
  const s = resolve(json, schema);
  return (s?.oneOf ?? s?.anyOf ?? [s]).map((arm) => resolve(json, arm) ?? {});
};

describe("the OpenAPI document", () => {
  it("is served without a key, as JSON", async () => {
    const r = await api("GET", "/openapi.json", undefined, { key: "" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(r.json.openapi).toBe("3.1.0");
  });

  it("lists exactly the registered routes", async () => {
    const json = await served();
    const listed = Object.entries(json.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual(
      registeredRoutes()
        .map((r) => fromHono(r))
        .sort(),
    );
  });

  it("describes each route's body and query with the schemas that validate them", async () => {
    const json = await served();
    for (const r of ROUTES) {
      const op = json.paths[fromHono(r.path)][r.method.toLowerCase()];
      const where = `${r.method} ${r.path}`;
      if (r.body === "json") {
        const schema = op.requestBody?.content?.["application/json"]?.schema;
        expect(schema, where).toBeDefined();
        // The validators are strict objects (or a union of them): the document says so, and one of
        // them names every field of the sample.
        const shapes = arms(json, schema);
        for (const shape of shapes) expect(shape.additionalProperties, where).toBe(false);
        const fields = Object.keys(r.sample as object);
        expect(
          shapes.some((shape) => fields.every((f) => Object.keys(shape.properties ?? {}).includes(f))),
          `${where}: ${fields.join(", ")}`,
        ).toBe(true);
      } else if (r.body === "raw")
        // Raw bytes, or the media types the route reads itself (an import: JSON or NDJSON).
        expect(Object.keys(op.requestBody?.content ?? {}).length, where).toBeGreaterThan(0);
      else expect(op.requestBody, where).toBeUndefined();
      const queryNames = (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      for (const name of Object.keys(r.query ?? {})) expect(queryNames, where).toContain(name);
      const pathNames = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      expect(pathNames, where).toEqual([...r.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
      expect(op.responses.default, where).toEqual({ $ref: "#/components/responses/Error" });
      expect(op.summary, where).not.toMatch(/^(GET|POST|PUT|PATCH|DELETE) /);
    }
  });

  it("names the error shape, the SSE events and the websocket frames", async () => {
    const json = await served();
    expect(json.components.schemas.Error.required).toEqual(["error"]);
    const turn = json.paths["/v1/conversations/{id}/messages"].post;
    expect(turn.responses["200"].content!["text/event-stream"].schema).toEqual({
      $ref: "#/components/schemas/TurnEvent",
    });
    const events = json.components.schemas.TurnEvent.oneOf!.map((e) => e.properties!.type.const);
    expect(events).toEqual(expect.arrayContaining(["turn_start", "delta", "message", "turn_end", "error"]));
    const ws = json.paths["/v1/conversations/{id}/ws"].get["x-websocket"];
    expect(ws).toMatchObject({
      clientFrames: { $ref: "#/components/schemas/SocketClientFrame" },
      serverFrames: { $ref: "#/components/schemas/SocketServerFrame" },
    });
    expect(json.components.schemas.SocketClientFrame.oneOf!.map((f) => f.properties!.type.const)).toEqual([
      "send",
      "ping",
      "stop",
      "tool_results",
    ]);
    // Stopping a turn: a route of its own, and the socket's `stopped` answer.
    expect(json.paths["/v1/conversations/{id}/stop"].post.requestBody!.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/StopTurnBody",
    });
    expect(JSON.stringify(json.components.schemas.SocketServerFrame)).toContain('"stopped"');
  });

  it("is the copy committed in client/openapi.gen.json (npm run openapi regenerates it and the client's types)", async () => {
    const { json } = await api("GET", "/openapi.json", undefined, { key: "" });
    expect(json).toEqual(committed);
  });

  it('says a tool\'s input schema must have "type": "object", as the routes refuse one without it', async () => {
    const found: unknown[] = [];
    const walk = (v: unknown): void => {
      if (!v || typeof v !== "object") return;
      for (const [k, child] of Object.entries(v)) {
        if ((k === "input_schema" || k === "inputSchema") && child && typeof child === "object" && "type" in child)
          found.push(child);
        walk(child);
      }
    };
    walk(await served());
    // The turn body's and the frame's tools, the tenant tool's create and update, and the tool as listed.
    expect(found.length).toBeGreaterThanOrEqual(6);
    for (const schema of found)
      expect(schema).toMatchObject({ required: ["type"], properties: { type: { type: "string" } } });
    const refused = await api("POST", "/v1/tools", {
      name: "no_type",
      description: "d",
      inputSchema: { properties: {} },
      endpoint: "https://tools.example.com/x",
    });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.json.error?.message).toContain('must have "type": "object"');
  });

  it("describes POST /v1/tools's body per kind: an http tool's endpoint required, a client tool without the http fields", async () => {
    const json = await served();
    const body = json.paths["/v1/tools"].post.requestBody?.content["application/json"].schema;
    const byKind = Object.fromEntries(arms(json, body).map((arm) => [String(arm.properties?.kind?.const), arm]));
    expect(Object.keys(byKind).sort()).toEqual(["client", "http"]);
    const httpOnly = ["endpoint", "headers", "timeoutMs", "maxResponseBytes", "idempotent", "retries"];
    expect(Object.keys(byKind.http.properties ?? {})).toEqual(expect.arrayContaining(httpOnly));
    expect(byKind.http.required).toEqual(
      expect.arrayContaining(["kind", "name", "description", "inputSchema", "endpoint"]),
    );
    expect(byKind.http.properties?.retries?.description).toMatch(/idempotent: true/);
    for (const field of httpOnly) expect(Object.keys(byKind.client.properties ?? {})).not.toContain(field);
    // As the route holds them (test/workers/tools-create-body.test.ts words every refusal).
    const tool = { name: "t", description: "d", inputSchema: { type: "object" } };
    expect((await api("POST", "/v1/tools", { kind: "http", ...tool })).json.error?.message).toBe(
      "endpoint: required for an http tool",
    );
    expect((await api("POST", "/v1/tools", { kind: "client", ...tool, timeoutMs: 1000 })).json.error?.message).toBe(
      "timeoutMs: only for an http tool",
    );
  });

  it("says what an import does with a tool call left without its result, as the route does", async () => {
    const json = await served();
    const description = json.paths["/v1/conversations/import"].post.description ?? "";
    expect(description).not.toMatch(/must be answered/);
    expect(description).toMatch(/a call left without its result .*is taken/);
    expect(description).toMatch(/A tool_use before the first user message is a 400/);
    const call = { type: "tool_use", id: "call_open", name: "memory_search", input: { query: "x" } };
    const unanswered = [
      { role: "user", content: "look it up" },
      { role: "assistant", content: [call] },
      { role: "user", content: "never mind" },
      { role: "assistant", content: "ok" },
    ];
    const taken = await api("POST", "/v1/conversations/import", { messages: unanswered });
    expect(taken.status, taken.text).toBe(201);
    const early = await api("POST", "/v1/conversations/import", {
      messages: [{ role: "assistant", content: [call] }, ...unanswered.slice(0, 1)],
    });
    expect(early.status).toBe(400);
    expect(early.json.error?.message).toContain("a tool_use before the transcript's first user message");
  });
});
