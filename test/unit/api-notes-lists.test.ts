// docs/api-notes.md on lists against the committed OpenAPI document (client/openapi.gen.json, kept
// equal to what the app serves by test/workers/openapi.test.ts): every list takes ?limit=&cursor=,
// the table's default and maximum of each limit are the document's, and lists have one shape.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const notes = read("docs/api-notes.md");

interface Param {
  in: string;
  name: string;
  schema?: { type?: string; default?: unknown; maximum?: number };
}
interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
}
interface Operation {
  parameters?: Param[];
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
const document = JSON.parse(read("client/openapi.gen.json")) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const resolve = (s: Schema | undefined) => (s?.$ref ? document.components.schemas[s.$ref.split("/").pop()!] : s);
const queryOf = (op: Operation, name: string) => op.parameters?.find((p) => p.in === "query" && p.name === name);

/** The rows of the table under "## Listing and paging": route, default and maximum of its limit. */
function listingTable() {
  const section = notes.slice(notes.indexOf("## Listing and paging"));
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| route |")));
  return [...table.matchAll(/^\| `GET ([^`?]+)[^`]*` \|[^|]*\| (\d+), (\d+) \|/gm)].map((m) => ({
    path: m[1].replace(/:(\w+)/g, "{$1}"),
    default: Number(m[2]),
    maximum: Number(m[3]),
  }));
}

describe("docs/api-notes.md on lists", () => {
  it("every route that answers a list page takes limit and cursor, as the notes say", () => {
    const lists = Object.entries(document.paths).flatMap(([path, methods]) => {
      const op = methods.get;
      const page = resolve(op?.responses?.["200"]?.content?.["application/json"]?.schema);
      return op && page?.properties?.data?.type === "array" && page.properties.next ? [{ path, op }] : [];
    });
    expect(lists.length).toBeGreaterThan(15);
    expect(notes).toContain("Every list route answers one shape, `{data: [...], next}`, and takes `?limit=&cursor=`");
    for (const { path, op } of lists) {
      expect(queryOf(op, "limit"), path).toBeDefined();
      expect(queryOf(op, "cursor"), path).toBeDefined();
    }
  });

  it("the table's default and maximum of each limit are the document's", () => {
    const rows = listingTable();
    expect(rows.length).toBeGreaterThan(12);
    for (const row of rows) {
      const limit = queryOf(document.paths[row.path]?.get ?? {}, "limit");
      expect(limit?.schema, row.path).toMatchObject({ type: "integer", default: row.default, maximum: row.maximum });
    }
  });

  it("says a list page is {data, next}, with no second array of its items beside data", () => {
    expect(notes).not.toMatch(/beside its named one/);
    expect(notes).not.toMatch(/which have only `keys`/);
    expect(notes).toContain("every list page's `data` array and `next` cursor");
  });
});
