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
  const?: unknown;
}
type Content = Record<string, { schema: SchemaObject }>;
interface Operation {
  summary?: string;
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
        // The validators are strict objects: the document says so, and names every field of the sample.
        const resolved = schema?.$ref ? json.components.schemas[schema.$ref.split("/").pop()!] : schema;
        expect(resolved?.additionalProperties, where).toBe(false);
        for (const field of Object.keys(r.sample as object))
          expect(Object.keys(resolved?.properties ?? {}), where).toContain(field);
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
});
