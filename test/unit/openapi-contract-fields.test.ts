// The committed OpenAPI document (client/openapi.gen.json) describes what the routes answer: the
// fields API.md and docs/api-notes.md promise for each resource, a turn's refusal and model changes,
// the JSON bodies of a turn's error answers, and a client frame's defaulted fields as optional. The
// client's types (client/api-types.gen.ts) name the fields the routes send beyond those.
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  const?: unknown;
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
    Channel: {
      required: ["name", "conversationId", "rotationSeconds", "lastActivityAt", "createdAt"],
      optional: ["rotations"],
    },
    Conversation: { required: ["id", "title", "settings", "messageCount", "lastSeq"], optional: ["superseded"] },
    Model: {
      required: ["id", "aliases", "name", "line", "default", "status", "replacement", "prices", "sources"],
      optional: [
        "thinking",
        "deprecatedOn",
        "retiresOn",
        "retiredOn",
        "effort",
        "prefill",
        "samplingParameters",
        "forcedToolChoice",
        "tokenizerRatio",
        "minCacheTokens",
        "maxImagesPerRequest",
        "serverTools",
        "serverToolNames",
        "catalog",
      ],
    },
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

/** Where each field the routes send beyond the resources is declared, and what is declared there. */
const SENT: { where: string; schema: () => Schema | undefined; fields: string[] }[] = [
  {
    where: "TurnErrorResult.error",
    schema: () => schemas.TurnErrorResult.properties?.error,
    fields: ["type", "message", "status", "providerType", "requestId", "overflow"],
  },
  {
    where: "TurnEvent error.error",
    schema: () => errorEventError(),
    fields: ["type", "message", "status", "providerType", "requestId", "overflow"],
  },
  ...["TurnErrorResult.error", "TurnEvent error.error"].map((where) => ({
    where: `${where}.overflow`,
    schema: () =>
      (where.startsWith("TurnEvent") ? errorEventError() : schemas.TurnErrorResult.properties?.error)?.properties
        ?.overflow,
    fields: ["promptTokens", "maxTokens"],
  })),
  {
    where: "GET /v1/models 200",
    schema: () => answer("/v1/models", "get", "200"),
    fields: ["data", "next", "defaultModel"],
  },
  ...["total", "conversations", "models"].map((row) => ({
    where: `Usage.${row}`,
    schema: () => {
      const p = schemas.Usage.properties?.[row];
      return p?.items ?? p;
    },
    fields: [
      ...(row === "conversations" ? ["conversationId"] : row === "models" ? ["model"] : []),
      "turns",
      "folds",
      "titles",
      "unpricedCalls",
      "web_search_requests",
      "web_fetch_requests",
    ],
  })),
  ...["compaction", "compaction_finished"].map((type) => ({
    where: `TurnEvent ${type}`,
    schema: () => schemas.TurnEvent.oneOf?.find((e) => e.properties?.type?.const === type),
    fields: ["targets", "durationMs", "summarized", "details"],
  })),
  {
    where: "POST /v1/conversations/{id}/ws-ticket 201",
    schema: () => answer("/v1/conversations/{id}/ws-ticket", "post", "201"),
    fields: ["ticket", "expiresAt"],
  },
  { where: "GET /v1/search 200", schema: () => answer("/v1/search", "get", "200"), fields: ["query", "data"] },
];
function errorEventError(): Schema | undefined {
  return schemas.TurnEvent.oneOf?.find((e) => e.properties?.type?.const === "error")?.properties?.error;
}
function answer(path: string, method: string, status: string): Schema | undefined {
  return document.paths[path]?.[method]?.responses[status]?.content?.["application/json"]?.schema;
}

describe("the document declares the fields the routes send beyond the resources", () => {
  for (const { where, schema, fields } of SENT)
    it(where, () => {
      expect(Object.keys(schema()?.properties ?? {})).toEqual(expect.arrayContaining(fields));
    });

  it("TurnErrorResult.error: the provider's type and request id are optional (a model failure's only)", () => {
    const error = schemas.TurnErrorResult.properties?.error;
    expect(error?.required).toEqual(["type", "message"]);
  });

  it("POST /v1/conversations/import 404: a key's deleted conversation, and one deleted while the import commits", () => {
    const notFound = (document.paths["/v1/conversations/import"].post.responses["404"] as { description?: string })
      .description;
    expect(notFound).toMatch(/Idempotency-Key/);
    expect(notFound).toMatch(/deleted while the import (was )?committed/);
  });

  it("an attachment's download: served with its stored type, so any media type", () => {
    const content =
      document.paths["/v1/conversations/{id}/attachments/{attachmentId}/content"].get.responses["200"].content;
    expect(Object.keys(content ?? {})).toEqual(["*/*"]);
  });
});

/**
 * The lines of the block a line containing `marker` opens in the generated types (its members one
 * level in), or, for a member line, the lines of its siblings; each further marker is sought inside.
 */
function typeBlock(text: string, markers: string[]): string[] {
  let lines = text.split("\n");
  for (const marker of markers) {
    const at = lines.findIndex((l) => l.includes(marker));
    if (at < 0) return [];
    const indent = lines[at].search(/\S/);
    const opens = lines[at].trimEnd().endsWith("{");
    const rest = lines.slice(at + 1);
    // A block ends at its closing line (one that does not open the next arm of a union).
    const end = rest.findIndex((l) => {
      const i = l.search(/\S/);
      return opens ? i === indent && /^\s*}[^{]*$/.test(l) : i < indent;
    });
    lines = end < 0 ? rest : rest.slice(0, end);
  }
  return lines;
}
/** The member names of a block: its lines one level in (or at the member's own level), `name?:` or `name:`. */
const membersOf = (block: string[]) => {
  const level = Math.min(...block.map((l) => l.search(/\S/)).filter((i) => i >= 0));
  return block.filter((l) => l.search(/\S/) === level).map((l) => /^\s*"?([\w$]+)"?\??:/.exec(l)?.[1]);
};

describe("the client's types (client/api-types.gen.ts) name them", () => {
  const types = readFileSync(new URL("../../client/api-types.gen.ts", import.meta.url), "utf8");
  const named: { markers: string[]; fields: string[] }[] = [
    {
      markers: ["  TurnErrorResult: {", "    error: {"],
      fields: ["providerType", "requestId", "status", "overflow"],
    },
    {
      markers: ["  TurnEvent: {", '    type: "error";', "    error: {"],
      fields: ["providerType", "requestId", "overflow"],
    },
    {
      markers: ["  Model: {"],
      fields: ["thinking", "prices", "line", "default", "effort", "prefill", "serverToolNames", "catalog"],
    },
    { markers: ['"GET /v1/models": {', "response: {"], fields: ["data", "next", "defaultModel"] },
    { markers: ["  Channel: {"], fields: ["rotationSeconds", "lastActivityAt", "createdAt", "rotations"] },
    { markers: ["  Conversation: {"], fields: ["superseded"] },
    ...["total: {", "conversations: Array<{", "models: Array<{"].map((row) => ({
      markers: ["  Usage: {", `    ${row}`],
      fields: [
        ...(row.startsWith("conversations") ? ["conversationId"] : row.startsWith("models") ? ["model"] : []),
        "turns",
        "folds",
        "titles",
        "unpricedCalls",
        "web_search_requests",
        "web_fetch_requests",
      ],
    })),
    ...["compaction", "compaction_finished"].map((type) => ({
      markers: ["  TurnEvent: {", `    type: "${type}";`],
      fields: ["targets", "durationMs", "summarized", "details"],
    })),
    { markers: ['"POST /v1/conversations/{id}/ws-ticket": {', "response: {"], fields: ["ticket", "expiresAt"] },
    { markers: ['"GET /v1/search": {', "response: {"], fields: ["query", "data"] },
  ];
  for (const { markers, fields } of named)
    it(markers.map((m) => m.trim().replace(/:? (Array<)?\{$|;$/, "")).join(" > "), () => {
      expect(membersOf(typeBlock(types, markers))).toEqual(expect.arrayContaining(fields));
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

describe("core/events.ts declares what the document says the events carry", () => {
  /** The members of the `error` event's `error` object in core/events.ts's TurnEvent, read from its syntax. */
  function errorEventMembers(): string[] {
    const path = new URL("../../core/events.ts", import.meta.url);
    const file = ts.createSourceFile("events.ts", readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
    const found: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isTypeLiteralNode(node)) {
        const member = (name: string) =>
          node.members.find((m) => ts.isPropertySignature(m) && m.name.getText(file) === name) as
            | ts.PropertySignature
            | undefined;
        const tag = member("type")?.type;
        const error = member("error")?.type;
        if (tag?.getText(file) === '"error"' && error && ts.isTypeLiteralNode(error))
          found.push(...error.members.map((m) => m.name?.getText(file) ?? ""));
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
    return found;
  }

  it("the error event's `error`: every field the document's TurnEvent error declares", () => {
    const declared = Object.keys(errorEventError()?.properties ?? {});
    expect(declared.length).toBeGreaterThan(0);
    expect(errorEventMembers()).toEqual(expect.arrayContaining(declared));
  });
});
