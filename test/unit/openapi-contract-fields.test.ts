// The committed OpenAPI document (client/openapi.gen.json) describes what the routes answer: the
// fields API.md and docs/api-notes.md promise for each resource, a turn's refusal and model changes,
// the JSON bodies of a turn's error answers, and a client frame's defaulted fields as optional.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
}
interface Response {
  content?: Record<string, { schema: Schema }>;
}
const document = JSON.parse(readFileSync(new URL("../../client/openapi.gen.json", import.meta.url), "utf8")) as {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, Schema> };
};
const schemas = document.components.schemas;
const fieldsOf = (name: string) => Object.keys(schemas[name]?.properties ?? {});
const requiredOf = (name: string) => schemas[name]?.required ?? [];

describe("the document's resources declare the fields their routes answer", () => {
  const promised: Record<string, { required: string[]; optional?: string[] }> = {
    Attachment: {
      required: ["id", "conversationId", "name", "type", "size", "status", "facts", "createdAt", "note"],
      optional: ["indexStatus", "pagesIndexed"],
    },
    Automation: { required: ["id", "name", "schedule", "prompt", "channel", "paused", "createdAt", "updatedAt"] },
    ConversationListItem: { required: ["id", "title", "createdAt", "updatedAt", "messageCount"] },
    Episode: { required: ["id", "conversationId", "day", "throughSeq", "body", "createdAt"] },
    Note: { required: ["id", "title", "text", "tags", "sourceConversationId", "createdAt", "updatedAt"] },
    Project: { required: ["id", "name", "settings", "createdAt", "updatedAt"] },
    Tool: {
      required: ["id", "kind", "name", "description", "inputSchema", "projectId", "createdAt", "updatedAt"],
      optional: ["endpoint", "headers", "timeoutMs", "maxResponseBytes", "idempotent", "retries"],
    },
  };
  for (const [name, { required, optional = [] }] of Object.entries(promised))
    it(name, () => {
      expect(fieldsOf(name)).toEqual(expect.arrayContaining([...required, ...optional]));
      expect(requiredOf(name)).toEqual(expect.arrayContaining(required));
      for (const field of optional) expect(requiredOf(name), `${name}.${field}`).not.toContain(field);
    });

  it("TurnResult: refusal and model_changes (optional); its error answers carry `error`", () => {
    expect(fieldsOf("TurnResult")).toEqual(expect.arrayContaining(["refusal", "model_changes", "superseded"]));
    expect(requiredOf("TurnResult")).not.toContain("refusal");
    expect(requiredOf("TurnResult")).not.toContain("model_changes");
    expect(requiredOf("TurnErrorResult")).toEqual(expect.arrayContaining(["error", "messages", "stop_reason"]));
  });
});

describe("a turn route's error answers have bodies", () => {
  const either = { anyOf: [{ $ref: "#/components/schemas/Error" }, { $ref: "#/components/schemas/TurnErrorResult" }] };
  for (const [path, method] of [
    ["/v1/conversations/{id}/messages", "post"],
    ["/v1/conversations/{id}/tool-results", "post"],
    ["/v1/channels/{name}/messages", "post"],
  ])
    it(`${method.toUpperCase()} ${path}`, () => {
      const responses = document.paths[path][method].responses;
      const body = (status: string) => responses[status]?.content?.["application/json"]?.schema;
      // 409 (turn_paused, tool_results_conflict, nothing_to_regenerate…) and 503: an Error when refused
      // before the turn runs, the turn with `error` (turnJson) when it ends in one; 400 model_unavailable too.
      expect(body("409")).toEqual(either);
      expect(body("503")).toEqual(either);
      expect(body("400")).toEqual(either);
      expect(body("502")).toEqual({ $ref: "#/components/schemas/TurnErrorResult" });
    });
});

describe("client frames are described as the server takes them in", () => {
  it("a send frame's tool may leave out its description (it defaults to empty)", () => {
    const send = (schemas.SocketClientFrame.oneOf ?? []).find(
      (f) => f.properties?.type && "tools" in (f.properties ?? {}),
    );
    const tool = send?.properties?.tools?.items;
    expect(tool?.properties && Object.keys(tool.properties)).toContain("description");
    expect(tool?.required).toEqual(["name", "input_schema"]);
  });
});
