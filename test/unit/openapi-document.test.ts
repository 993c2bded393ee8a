// The committed OpenAPI document (kept equal to what the app serves by test/workers/openapi.test.ts)
// is valid OpenAPI 3.1 by a standard validator, resolves every $ref, and the client's types are
// what the generator makes of it.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { typesFromDocument } from "../../scripts/openapi-types.mjs";

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const document = JSON.parse(read("client/openapi.gen.json"));

describe("client/openapi.gen.json", () => {
  it("validates as OpenAPI 3.1 and every $ref resolves", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it("a broken document is refused (the validator is not a formality)", async () => {
    const broken = structuredClone(document);
    broken.paths["/v1/conversations"].post.responses = { "201": { content: {} } }; // a response without its description
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("declares the x-d1-bookmark header on every /v1 operation, asked and answered", () => {
    expect(document.components.parameters.D1Bookmark).toMatchObject({
      name: "x-d1-bookmark",
      in: "header",
      required: false,
    });
    type Operation = { parameters?: unknown[]; responses: Record<string, { headers?: Record<string, unknown> }> };
    const ops = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ path, method, op })),
    );
    const v1 = ops.filter((o) => o.path.startsWith("/v1/"));
    expect(v1.length).toBeGreaterThan(40);
    for (const { path, method, op } of v1) {
      expect(op.parameters, `${method} ${path}`).toContainEqual({ $ref: "#/components/parameters/D1Bookmark" });
      for (const [status, r] of Object.entries(op.responses))
        if (status !== "default" && status !== "101" && status !== "429")
          expect(r.headers?.["x-d1-bookmark"], `${method} ${path} ${status}`).toEqual({
            $ref: "#/components/headers/D1Bookmark",
          });
    }
    for (const { op } of ops.filter((o) => !o.path.startsWith("/v1/")))
      expect(JSON.stringify(op)).not.toContain("D1Bookmark");
  });

  it("declares every paged list's items under data; a route's older field name, where kept, is marked deprecated", () => {
    type ListSchema = { properties: Record<string, { type?: string; deprecated?: boolean }> };
    type Methods = { get?: { responses?: Record<string, { content?: Record<string, { schema?: ListSchema }> }> } };
    const lists = Object.entries(document.paths as Record<string, Methods>).flatMap(([path, methods]) => {
      const schema = methods.get?.responses?.["200"]?.content?.["application/json"]?.schema;
      // The key lists answer {keys, next}: they never had another shape.
      return schema?.properties?.next && path !== "/v1/keys" && path !== "/v1/admin/tenants/{tenant}/keys"
        ? [{ path, schema }]
        : [];
    });
    expect(lists.length).toBeGreaterThan(12);
    for (const { path, schema } of lists) {
      expect(schema.properties.data?.type, path).toBe("array");
      for (const [name, p] of Object.entries(schema.properties))
        if (name !== "data" && p.type === "array") expect(p.deprecated, `${path} ${name}`).toBe(true);
    }
  });

  it("client/api-types.gen.ts is generated from it (npm run openapi)", () => {
    expect(read("client/api-types.gen.ts")).toBe(typesFromDocument(document));
  });
});
