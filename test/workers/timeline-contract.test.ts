// GET /v1/conversations/:id/timeline as the OpenAPI document describes it: the route answers
// timeline cards only (a compaction, a model change), paged by card id, and the committed document
// (client/openapi.gen.json, the typed client's types) names every field of a real answer.
import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.gen.json";
import { api, createConversation, send, transcript } from "./helpers";

interface Schema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  items?: Schema;
}
const doc = committed as unknown as {
  paths: Record<string, Record<string, { summary: string; description?: string; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, Schema> };
};

const typeOf = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
const fits = (t: string, v: unknown) => t === typeOf(v) || (t === "number" && typeof v === "number");

/**
 * What of `value` the schema does not describe: a missing required field, a field it does not
 * declare, a wrong type or constant; a union fits when one of its members does.
 */
function problems(schema: Schema, value: unknown, at: string): string[] {
  if (schema.$ref) return problems(doc.components.schemas[schema.$ref.split("/").pop() ?? ""], value, at);
  const members = schema.oneOf ?? schema.anyOf;
  if (members) {
    const each = members.map((m) => problems(m, value, at));
    return each.some((p) => p.length === 0) ? [] : [`${at}: fits no member (${each.map((p) => p[0]).join("; ")})`];
  }
  if ("const" in schema && schema.const !== value) return [`${at}: ${JSON.stringify(value)} is not ${schema.const}`];
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in the enum`];
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length && !types.some((t) => fits(t, value))) return [`${at}: ${typeOf(value)} is not ${types}`];
  if (Array.isArray(value) && schema.items)
    return value.flatMap((v, i) => problems(schema.items as Schema, v, `${at}[${i}]`));
  if (typeOf(value) !== "object" || !schema.properties) return [];
  const body = value as Record<string, unknown>;
  const out = (schema.required ?? []).filter((f) => !(f in body)).map((f) => `${at}.${f}: missing`);
  for (const [field, v] of Object.entries(body)) {
    const p = schema.properties[field];
    out.push(...(p ? problems(p, v, `${at}.${field}`) : [`${at}.${field}: not declared`]));
  }
  return out;
}

const operation = doc.paths["/v1/conversations/{id}/timeline"].get;
const pageSchema = (operation.responses["200"] as { content: { "application/json": { schema: Schema } } }).content[
  "application/json"
].schema;

/** A text attachment of 5,000 rows: ten slices of it outgrow a 24,000-token window. */
async function rowsFile(id: string): Promise<string> {
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
  const up = await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, lines, {
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  return up.json.id as string;
}

describe("GET /v1/conversations/:id/timeline", () => {
  it("is documented as what it answers: timeline cards only, paged by card id, every field named", async () => {
    expect(operation.summary).not.toMatch(/messages/i);
    expect(operation.summary).toMatch(/card id/);
    expect(pageSchema.properties?.data.items?.$ref).toBe("#/components/schemas/TimelineCard");

    const id = await createConversation({
      contextWindowTokens: 24_000,
      outputReserveTokens: 2_000,
      refusalFallbackModel: "claude-opus-5-5",
    });
    // A refusal answered by the fallback model: a model_changed card.
    const refused = await send(id, "ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5");
    expect(refused.status, refused.text).toBe(200);
    // A monster turn compacted in memory: a compaction card.
    const att = await rowsFile(id);
    const calls = Array.from(
      { length: 10 },
      (_, i) => `@tool file_read {"attachment_id":"${att}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
    ).join("\n");
    expect((await send(id, `read all ten slices\n${calls}`)).status).toBe(200);

    const page = await api("GET", `/v1/conversations/${id}/timeline`);
    expect(page.status, page.text).toBe(200);
    expect(problems(pageSchema, page.json, "page")).toEqual([]);
    const cards = page.json.data as { id: number; afterSeq: number; type: string; card: { type: string } }[];
    expect(cards.map((c) => c.type)).toEqual(["model_changed", "compaction"]);
    expect(cards.map((c) => c.card.type)).toEqual(["model_changed", "compaction"]);
    // No messages: those are GET /messages, and there are more of them than cards.
    expect((await transcript(id)).length).toBeGreaterThan(cards.length);
    // Paged by card id: `next` is the page's last card id, and `after` takes it back.
    const first = await api("GET", `/v1/conversations/${id}/timeline?limit=1`);
    expect(first.json.data).toEqual([cards[0]]);
    expect(first.json.next).toBe(cards[0].id);
    const second = await api("GET", `/v1/conversations/${id}/timeline?limit=1&after=${first.json.next}`);
    expect(second.json).toEqual({ data: [cards[1]], next: null });
    // A card's afterSeq is a message seq, not the cursor: it places the compaction after the refused exchange.
    expect(cards[1].afterSeq).toBeGreaterThanOrEqual(cards[0].afterSeq);
    expect(cards[1].afterSeq).not.toBe(cards[1].id);
  });
});
