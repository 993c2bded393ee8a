// Real answers of the resource routes and of a refused turn, checked against the committed OpenAPI
// document (client/openapi.gen.json): every field the document requires is there with its type, and
// every field the answer sends is one the document declares (so the client's types name them).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { sortableId } from "../../core/ids";
import { api, createConversation, eventually, newTenantWithId, sendSseEvents } from "./helpers";

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
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
const schemas = committed.components.schemas as unknown as Record<string, Schema>;
const paths = committed.paths as Record<string, Record<string, Operation>>;

const typeOf = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
const fits = (t: string, v: unknown) => t === typeOf(v) || (t === "number" && typeof v === "number");

/** A schema with its $ref followed; a nullable object (`anyOf: [object, null]`) as its object. */
function objectOf(schema: Schema): Schema {
  const s = schema.$ref ? schemas[schema.$ref.split("/").pop() ?? ""] : schema;
  return s.anyOf?.map(objectOf).find((a) => a.properties) ?? s;
}

/** The problems of `value` against `schema` (named `where`): missing, undeclared or mistyped fields. */
function problemsOf(schema: Schema, value: unknown, where: string): string[] {
  if (typeof value !== "object" || value === null) return [`${where}: not an object`];
  const body = value as Record<string, unknown>;
  const out: string[] = [];
  for (const field of schema.required ?? []) if (!(field in body)) out.push(`${where}.${field}: missing`);
  for (const [field, v] of Object.entries(body)) {
    const p = schema.properties?.[field];
    if (!p) out.push(`${where}.${field}: not declared`);
    else if (p.type && !(Array.isArray(p.type) ? p.type : [p.type]).some((t) => fits(t, v)))
      out.push(`${where}.${field}: ${typeOf(v)} is not ${JSON.stringify(p.type)}`);
  }
  return out;
}

/** The problems of `value` against the named component. */
const problems = (name: string, value: unknown) => problemsOf(schemas[name], value, name);

/** The JSON schema of an operation's answer, its $ref followed. */
const answerOf = (path: string, method: string, status = "200") =>
  objectOf(paths[path][method].responses[status].content?.["application/json"]?.schema ?? {});
/** A field's schema inside an object schema (an array's items for an array field). */
const fieldOf = (schema: Schema, field: string) => {
  const p = objectOf(schema.properties?.[field] ?? {});
  return p.items ? objectOf(p.items) : p;
};

describe("real answers against the document", () => {
  it("attachments, notes, episodes, projects, tools, automations and the conversation list", async () => {
    const { key, tenantId } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const ok = async (r: Promise<{ status: number; json: unknown; text: string }>, status = 200) => {
      const answer = await r;
      expect(answer.status, answer.text).toBe(status);
      return answer.json as Record<string, unknown>;
    };
    const upload = await ok(
      api("POST", `/v1/conversations/${conv}/attachments?name=a.txt`, "line one\nline two\n", {
        key,
        raw: true,
        headers: { "content-type": "text/plain" },
      }),
      201,
    );
    expect(problems("Attachment", upload)).toEqual([]);
    expect(
      problems(
        "Attachment",
        await ok(api("GET", `/v1/conversations/${conv}/attachments/${upload.id}`, undefined, { key })),
      ),
    ).toEqual([]);
    const note = await ok(api("POST", "/v1/memory", { text: "a note", title: "t", tags: ["x"] }, { key }), 201);
    expect(problems("Note", note)).toEqual([]);
    const epi = sortableId("epi");
    await env.DB.prepare(
      `INSERT INTO memory_episodes (id, tenant_id, conversation_id, fold_job_id, day, through_seq, body, created_at) VALUES (?, ?, ?, ?, '2025-01-01', 2, 'what the fold kept', '2025-01-01T00:00:00Z')`,
    )
      .bind(epi, tenantId, conv, `job-${epi}`)
      .run();
    expect(problems("Episode", await ok(api("GET", `/v1/memory/episodes/${epi}`, undefined, { key })))).toEqual([]);
    expect(problems("Project", await ok(api("POST", "/v1/projects", { name: "p" }, { key }), 201))).toEqual([]);
    const tool = await ok(
      api(
        "POST",
        "/v1/tools",
        { kind: "client", name: "lookup_x", description: "Looks x up.", inputSchema: { type: "object" } },
        { key },
      ),
      201,
    );
    expect(problems("Tool", tool)).toEqual([]);
    const automation = await ok(
      api(
        "POST",
        "/v1/automations",
        { name: "daily", schedule: "@daily", prompt: "p", channel: "c", paused: true },
        { key },
      ),
      201,
    );
    expect(problems("Automation", automation)).toEqual([]);
    const list = await ok(api("GET", "/v1/conversations", undefined, { key }));
    for (const item of list.data as unknown[]) expect(problems("ConversationListItem", item)).toEqual([]);
  });

  it("a refused regenerate (409 nothing_to_regenerate) is one of the 409's bodies", async () => {
    const conv = await createConversation();
    const r = await api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true });
    expect(r.status, r.text).toBe(409);
    expect(r.json).toMatchObject({ error: { type: "nothing_to_regenerate" } });
    const body = committed.paths["/v1/conversations/{id}/messages"].post.responses["409"] as {
      content?: { "application/json": { schema: Schema } };
    };
    const names = (body.content?.["application/json"].schema.anyOf ?? []).map((s) => s.$ref?.split("/").pop() ?? "");
    expect(names.some((name) => problems(name, r.json).length === 0)).toBe(true);
  });

  it("the model catalog: the list, each entry and its nested facts, and a model only the Models API knows", async () => {
    const list = await api("GET", "/v1/models");
    expect(list.status, list.text).toBe(200);
    const page = answerOf("/v1/models", "get");
    // Every field the list sends (its defaultModel included) is declared, with its type.
    expect(problemsOf(page, list.json, "GET /v1/models")).toEqual([]);
    const model = objectOf(page.properties?.data?.items ?? {});
    const entries = list.json.data as Record<string, unknown>[];
    expect(entries.some((m) => m.status === "retired" && m.prices === null)).toBe(true);
    for (const entry of entries) {
      expect(problemsOf(model, entry, `Model ${entry.id}`)).toEqual([]);
      for (const field of ["thinking", "prices", "effort"])
        if (entry[field]) expect(problemsOf(fieldOf(model, field), entry[field], field)).toEqual([]);
    }
    expect(entries.filter((m) => m.thinking && m.prices && m.effort).length).toBeGreaterThan(0);
    const one = await api("GET", "/v1/models/offline-20k");
    expect(one.status, one.text).toBe(200);
    expect(one.json).toMatchObject({ catalog: false });
    expect(problemsOf(answerOf("/v1/models/{id}", "get"), one.json, "GET /v1/models/offline-20k")).toEqual([]);
  });

  it("a context overflow: the JSON answer's error and the SSE error event, with `overflow` and `providerType`", async () => {
    // `@model-error overflow` stays in the prompt, so the forced compaction's one retry overflows too.
    const conv = await createConversation();
    const content = "too long for the window\n@model-error overflow";
    const r = await api("POST", `/v1/conversations/${conv}/messages`, { content });
    expect(r.status, r.text).toBe(502);
    const error = r.json.error as Record<string, unknown>;
    expect(error).toMatchObject({
      type: "context_overflow",
      providerType: "invalid_request_error",
      overflow: { promptTokens: expect.any(Number), maxTokens: expect.any(Number) },
    });
    const failed = answerOf("/v1/conversations/{id}/messages", "post", "502");
    expect(problemsOf(failed, r.json, "TurnErrorResult")).toEqual([]);
    expect(problemsOf(fieldOf(failed, "error"), error, "TurnErrorResult.error")).toEqual([]);
    const overflow = fieldOf(fieldOf(failed, "error"), "overflow");
    expect(problemsOf(overflow, error.overflow, "TurnErrorResult.error.overflow")).toEqual([]);

    const events = await sendSseEvents(conv, content);
    const sent = events.find((e) => e.type === "error");
    expect(sent?.data).toMatchObject({
      error: {
        type: "context_overflow",
        providerType: "invalid_request_error",
        overflow: { promptTokens: expect.any(Number), maxTokens: expect.any(Number) },
      },
    });
    const arm = schemas.TurnEvent.oneOf?.find((s) => s.properties?.type?.const === "error") ?? {};
    const data = (sent?.data ?? {}) as { error?: Record<string, unknown> };
    expect(problemsOf(arm, data, "error")).toEqual([]);
    expect(problemsOf(fieldOf(arm, "error"), data.error, "error.error")).toEqual([]);
    expect(
      problemsOf(fieldOf(fieldOf(arm, "error"), "overflow"), data.error?.overflow, "error.error.overflow"),
    ).toEqual([]);
  });

  it("usage: the total, each conversation's row and each model's, with their counters", async () => {
    const { key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    expect((await api("POST", `/v1/conversations/${conv}/messages`, { content: "hello" }, { key })).status).toBe(200);
    const report = await eventually(async () => {
      const r = (await api("GET", "/v1/usage", undefined, { key })).json;
      return r.conversations.length > 0 && r.models.length > 0 ? r : null;
    });
    const usage = schemas.Usage;
    expect(problems("Usage", report)).toEqual([]);
    expect(problemsOf(fieldOf(usage, "total"), report.total, "Usage.total")).toEqual([]);
    for (const row of report.conversations)
      expect(problemsOf(fieldOf(usage, "conversations"), row, "Usage.conversations[]")).toEqual([]);
    for (const row of report.models) expect(problemsOf(fieldOf(usage, "models"), row, "Usage.models[]")).toEqual([]);
    expect(report.conversations[0]).toMatchObject({ conversationId: conv, turns: 1 });
  });

  it("channels, the websocket ticket, a regenerated conversation and a search", async () => {
    const { key } = await newTenantWithId();
    const name = `c-${crypto.randomUUID().slice(0, 8)}`;
    const configured = await api("PATCH", `/v1/channels/${name}`, { rotationSeconds: 600 }, { key });
    expect(configured.status, configured.text).toBe(200);
    expect(problems("Channel", configured.json)).toEqual([]);
    expect(configured.json).toMatchObject({ rotationSeconds: 600, rotations: 0 });
    const sent = await api("POST", `/v1/channels/${name}/messages`, { content: "hello channel" }, { key });
    expect(sent.status, sent.text).toBe(200);
    expect(problems("Channel", (await api("GET", `/v1/channels/${name}`, undefined, { key })).json)).toEqual([]);
    const listed = (await api("GET", "/v1/channels", undefined, { key })).json.data;
    expect(listed).toHaveLength(1);
    for (const item of listed) expect(problems("Channel", item)).toEqual([]);

    const conv = await createConversation(undefined, key);
    const ticket = await api("POST", `/v1/conversations/${conv}/ws-ticket`, undefined, { key });
    expect(ticket.status, ticket.text).toBe(201);
    const ticketSchema = answerOf("/v1/conversations/{id}/ws-ticket", "post", "201");
    expect(problemsOf(ticketSchema, ticket.json, "ws-ticket")).toEqual([]);

    const turn = (content: unknown) => api("POST", `/v1/conversations/${conv}/messages`, content, { key });
    expect((await turn({ content: "Name a river, quokkavale." })).status).toBe(200);
    expect((await turn({ regenerate: true })).status).toBe(200);
    const regenerated = await api("GET", `/v1/conversations/${conv}`, undefined, { key });
    expect(regenerated.json.superseded).toHaveLength(1);
    expect(problems("Conversation", regenerated.json)).toEqual([]);
    for (const range of regenerated.json.superseded ?? [])
      expect(problemsOf(fieldOf(schemas.Conversation, "superseded"), range, "Conversation.superseded[]")).toEqual([]);

    const found = await api("GET", "/v1/search?q=quokkavale", undefined, { key });
    expect(found.status, found.text).toBe(200);
    expect(problemsOf(answerOf("/v1/search", "get"), found.json, "search")).toEqual([]);
    expect(found.json.query).toBe("quokkavale");
  });

  it("a turn's compaction events (the card under both names)", async () => {
    const id = await createConversation({ contextWindowTokens: 24_000, outputReserveTokens: 2_000 });
    const rows = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, rows, {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    const calls = Array.from(
      { length: 10 },
      (_, i) => `@tool file_read {"attachment_id":"${up.json.id}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
    ).join("\n");
    const events = await sendSseEvents(id, `read all ten slices\n${calls}`);
    const cards = events.filter((e) => e.type === "compaction" || e.type === "compaction_finished");
    expect(cards.map((e) => e.type)).toEqual(expect.arrayContaining(["compaction", "compaction_finished"]));
    for (const { type, data } of cards) {
      const arm = schemas.TurnEvent.oneOf?.find((s) => s.properties?.type?.const === type) ?? {};
      expect(problemsOf(arm, data, type)).toEqual([]);
      for (const detail of "details" in data ? data.details : [])
        expect(problemsOf(fieldOf(arm, "details"), detail, `${type}.details[]`)).toEqual([]);
    }
  });

  it("an attachment's download is served with its stored type, one the document's media ranges cover", async () => {
    const conv = await createConversation();
    const up = await api("POST", `/v1/conversations/${conv}/attachments?name=a.csv`, "a,b\n1,2\n", {
      raw: true,
      headers: { "content-type": "text/csv" },
    });
    expect(up.status, up.text).toBe(201);
    const r = await api("GET", `/v1/conversations/${conv}/attachments/${up.json.id}/content`);
    expect(r.status).toBe(200);
    const served = r.headers.get("content-type") ?? "";
    expect(served.split(";")[0]).toBe(up.json.type);
    const declared = Object.keys(
      paths["/v1/conversations/{id}/attachments/{attachmentId}/content"].get.responses["200"].content ?? {},
    );
    const covers = (range: string) => {
      const [type, sub] = range.split("/");
      const [servedType, servedSub] = served.split(";")[0].trim().split("/");
      return (type === "*" || type === servedType) && (sub === "*" || sub === servedSub);
    };
    expect(declared.some(covers), `${served} against ${declared.join(", ")}`).toBe(true);
  });
});
