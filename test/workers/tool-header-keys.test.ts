// A tool's `headers` and `inputSchema` keep every key the client sent, or the request is a 400:
// two spellings of one header name (which fetch would send joined, "old, new") and a "__proto__"
// key (which JSON.parse makes an own key and zod's z.record would silently drop) are refused on
// create and on PATCH, as is a "__proto__" key in a turn's client tool schema. Nothing is written.
import { describe, expect, inject, it } from "vitest";
import { api, createConversation, newTenant } from "./helpers";
import type { ApiError } from "../route-types";

const server = inject("httpToolServer");
const httpTool = (name: string, extra: Record<string, unknown> = {}) => ({
  kind: "http",
  name,
  description: "Looks up the weather of a city.",
  inputSchema: { type: "object" },
  endpoint: `${server}/echo`,
  ...extra,
});
/** JSON.parse, as the route does: "__proto__" becomes an own key, which JSON.stringify sends on. */
const own = (json: string): Record<string, unknown> => JSON.parse(json);

const expect400 = (r: { status: number; json: { error?: ApiError } }, message: RegExp) => {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error?.type).toBe("invalid_request");
  expect(r.json.error?.message).toMatch(message);
};

describe("tool headers and schemas keep every key", () => {
  it("refuses header names that differ only in case, on create and PATCH", async () => {
    const key = await newTenant();
    const twice = { "X-Api-Key": "old-secret", "x-api-key": "new-secret" };
    expect400(
      await api("POST", "/v1/tools", httpTool("weather", { headers: twice }), { key }),
      /^headers: X-Api-Key given twice/,
    );
    expect((await api("GET", "/v1/tools", undefined, { key })).json.data).toEqual([]);
    const created = await api("POST", "/v1/tools", httpTool("weather", { headers: { "X-Api-Key": "a" } }), { key });
    expect(created.status).toBe(201);
    expect400(
      await api(
        "PATCH",
        `/v1/tools/${created.json.id}`,
        { headers: { authorization: "a", Authorization: "b" } },
        { key },
      ),
      /^headers: authorization given twice/,
    );
    expect((await api("GET", `/v1/tools/${created.json.id}`, undefined, { key })).json.headers).toEqual(["X-Api-Key"]);
  });

  it('refuses a "__proto__" key in headers and inputSchema, on create and PATCH', async () => {
    const key = await newTenant();
    expect400(
      await api("POST", "/v1/tools", httpTool("weather", { headers: own('{"__proto__":"secret","X-A":"b"}') }), {
        key,
      }),
      /^headers: "__proto__" may not be a key$/,
    );
    expect400(
      await api(
        "POST",
        "/v1/tools",
        httpTool("weather", { inputSchema: own('{"type":"object","__proto__":{"x":1}}') }),
        {
          key,
        },
      ),
      /^inputSchema: "__proto__" may not be a key$/,
    );
    expect((await api("GET", "/v1/tools", undefined, { key })).json.data).toEqual([]);
    const created = await api("POST", "/v1/tools", httpTool("weather"), { key });
    expect(created.status).toBe(201);
    expect400(
      await api("PATCH", `/v1/tools/${created.json.id}`, { headers: own('{"__proto__":"x"}') }, { key }),
      /^headers: "__proto__" may not be a key$/,
    );
    expect400(
      await api(
        "PATCH",
        `/v1/tools/${created.json.id}`,
        { inputSchema: own('{"type":"object","__proto__":{}}') },
        { key },
      ),
      /^inputSchema: "__proto__" may not be a key$/,
    );
    expect((await api("GET", `/v1/tools/${created.json.id}`, undefined, { key })).json).toMatchObject({
      headers: [],
      inputSchema: { type: "object" },
    });
  });

  it('refuses a "__proto__" key in a turn\'s client tool schema', async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const tools = [{ name: "pick", description: "", input_schema: own('{"type":"object","__proto__":{"x":1}}') }];
    expect400(
      await api("POST", `/v1/conversations/${id}/messages`, { content: "hi", tools }, { key }),
      /^tools\.0\.input_schema: "__proto__" may not be a key$/,
    );
  });
});
