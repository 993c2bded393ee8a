// Every list's `limit` as the OpenAPI document states it: an integer with the bounds the route
// holds it to and the default it takes, read off the served document and tried on the route
// itself. And GET /v1/models, a list like the others: paged by limit and cursor.
import { describe, expect, it } from "vitest";
import { jsonOrUndefined } from "../json-body";
import { ADMIN, api } from "./helpers";
import { fillPath, ownEverything, ROUTES } from "./hostile-fixtures";

interface QueryParam {
  in: string;
  name: string;
  schema: { type?: string; minimum?: number; maximum?: number; default?: unknown; pattern?: string };
}
type Paths = Record<string, Record<string, { parameters?: QueryParam[] }>>;

const served = async () =>
  (jsonOrUndefined((await api("GET", "/openapi.json", undefined, { key: "" })).text) as { paths: Paths }).paths;
const toHono = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/** Each operation's `limit` parameter, as the document states it. */
async function limits() {
  return Object.entries(await served()).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, op]) =>
      (op.parameters ?? [])
        .filter((p) => p.in === "query" && p.name === "limit")
        .map((p) => ({ method: method.toUpperCase(), path: toHono(path), schema: p.schema })),
    ),
  );
}

describe("a list's limit in the OpenAPI document", () => {
  it("is an integer with its bounds, and its default when the route has one", async () => {
    const found = await limits();
    expect(found.length).toBeGreaterThan(15);
    for (const { method, path, schema } of found) {
      const where = `${method} ${path}`;
      expect(schema.type, where).toBe("integer");
      expect(schema.minimum, where).toBe(1);
      expect(schema.maximum, where).toBeGreaterThanOrEqual(schema.minimum ?? 1);
      expect(schema.pattern, where).toBeUndefined();
      if (schema.default !== undefined) {
        expect(Number.isInteger(schema.default), where).toBe(true);
        expect(schema.default as number, where).toBeLessThanOrEqual(schema.maximum!);
      }
    }
    // The usage report's limit has no default: without one it answers every conversation.
    expect(found.find((l) => l.path === "/v1/usage")?.schema.default).toBeUndefined();
    expect(found.find((l) => l.path === "/v1/conversations")?.schema).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 100,
      default: 20,
    });
  });

  it("states the maximum the route takes: the maximum is answered, one more is a 400 naming limit, as is 0", async () => {
    const owner = await ownEverything("limits");
    for (const { method, path, schema } of await limits()) {
      const spec = ROUTES.find((r) => r.method === method && r.path === path);
      expect(spec, `${method} ${path} in the route table`).toBeDefined();
      const ask = async (limit: number) => {
        const q = new URLSearchParams({ ...spec!.query, limit: String(limit) });
        return api("GET", `${fillPath(path, owner)}?${q}`, undefined, { key: spec!.admin ? ADMIN : owner.key });
      };
      const where = `${method} ${path}`;
      expect(schema.maximum, `${where}: the document's maximum`).toBeTypeOf("number");
      const max = schema.maximum!;
      const atMax = await ask(max);
      expect(atMax.status, `${where} limit=${max}: ${atMax.text.slice(0, 200)}`).toBe(200);
      for (const refused of [max + 1, 0]) {
        const r = await ask(refused);
        expect(r.status, `${where} limit=${refused}`).toBe(400);
        expect(r.json.error?.message, `${where} limit=${refused}`).toMatch(/^limit: /);
      }
    }
  });
});

describe("GET /v1/models", () => {
  it("pages the catalog by limit and cursor, as every list", async () => {
    const whole = await api("GET", "/v1/models");
    expect(whole.status).toBe(200);
    // The default page holds the whole catalog.
    expect(whole.json.next).toBeNull();
    const ids = whole.json.data.map((m) => m.id);
    expect(ids.length).toBeGreaterThan(3);
    const page = (after: string | number | null) =>
      api("GET", `/v1/models?limit=3${after === null ? "" : `&cursor=${after}`}`);
    const paged: string[] = [];
    let cursor: string | number | null = null;
    let pages = 0;
    do {
      const r = await page(cursor);
      expect(r.status, r.text).toBe(200);
      expect(r.json.data.length).toBeLessThanOrEqual(3);
      expect(r.json.defaultModel).toBe(whole.json.defaultModel);
      paged.push(...r.json.data.map((m) => m.id));
      cursor = r.json.next;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(paged).toEqual(ids);
    expect(pages).toBe(Math.ceil(ids.length / 3));
    // A status pages within it, the cursor found in the catalog's order.
    const retired = whole.json.data.filter((m) => m.status === "retired").map((m) => m.id);
    const first = await api("GET", "/v1/models?status=retired&limit=1");
    expect(first.json.data.map((m) => m.id)).toEqual(retired.slice(0, 1));
    expect(first.json.next).toBe(retired[0]);
    const rest = await api("GET", `/v1/models?status=retired&limit=100&cursor=${retired[0]}`);
    expect(rest.json.data.map((m) => m.id)).toEqual(retired.slice(1));
    expect(rest.json.next).toBeNull();
  });

  it("refuses a limit past 100 and a cursor that is no model of the catalog, naming them", async () => {
    expect((await api("GET", "/v1/models?limit=100")).status).toBe(200);
    for (const [query, field] of [
      ["limit=101", "limit"],
      ["limit=0", "limit"],
      ["cursor=claude-nope", "cursor"],
    ] as const) {
      const r = await api("GET", `/v1/models?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.json.error?.message, query).toMatch(new RegExp(`^${field}: `));
    }
  });
});
