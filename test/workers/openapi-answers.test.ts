// Real answers of the resource routes and of a refused turn, checked against the committed OpenAPI
// document (client/openapi.gen.json): every field the document requires is there with its type, and
// every field the answer sends is one the document declares (so the client's types name them).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { sortableId } from "../../core/ids";
import { api, createConversation, newTenantWithId } from "./helpers";

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  items?: Schema;
}
const schemas = committed.components.schemas as Record<string, Schema>;

const typeOf = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
const fits = (t: string, v: unknown) => t === typeOf(v) || (t === "number" && typeof v === "number");

/** The problems of `value` against the named component: missing, undeclared or mistyped fields. */
function problems(name: string, value: unknown): string[] {
  const schema = schemas[name];
  if (typeof value !== "object" || value === null) return [`${name}: not an object`];
  const body = value as Record<string, unknown>;
  const out: string[] = [];
  for (const field of schema.required ?? []) if (!(field in body)) out.push(`${name}.${field}: missing`);
  for (const [field, v] of Object.entries(body)) {
    const p = schema.properties?.[field];
    if (!p) out.push(`${name}.${field}: not declared`);
    else if (p.type && !(Array.isArray(p.type) ? p.type : [p.type]).some((t) => fits(t, v)))
      out.push(`${name}.${field}: ${typeOf(v)} is not ${JSON.stringify(p.type)}`);
  }
  return out;
}

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
});
