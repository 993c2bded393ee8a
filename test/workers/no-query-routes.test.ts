import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant } from "./helpers";

describe("a route that takes no query", () => {
  it("refuses broken percent-encoding, a repeated parameter and an unknown one, naming it", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const broken = await api("GET", `/v1/conversations/${id}?a=%FF`, undefined, { key });
    expect(broken.status).toBe(400);
    expect(broken.json).toMatchObject({ error: { type: "invalid_request" } });
    expect(broken.text).toContain("%FF");
    const repeated = await api("GET", `/v1/conversations/${id}/replay?limit=1&limit=2`, undefined, { key });
    expect(repeated.status).toBe(400);
    expect(repeated.text).toContain("limit");
    const dry = await api("DELETE", `/v1/conversations/${id}?dryRun=true`, undefined, { key });
    expect(dry.status).toBe(400);
    expect(dry.json).toMatchObject({
      error: { type: "invalid_request", message: "unknown field dryRun: this route takes no query parameters" },
    });
    // The refused DELETE deleted nothing.
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).status).toBe(200);
    // Elsewhere too: a POST with no query declared.
    const exp = await api("POST", "/v1/exports?x=1", {}, { key });
    expect(exp.status).toBe(400);
    expect(exp.text).toContain("unknown field x");
  });

  it("leaves routes with a query, and an unknown path, as they were", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await api("GET", `/v1/conversations/${id}/messages?after=0&limit=5`, undefined, { key })).status).toBe(200);
    expect((await api("GET", "/v1/conversations?order=activity&limit=30", undefined, { key })).status).toBe(200);
    expect((await api("GET", `/v1/conversations/${id}/timeline?limit=500`, undefined, { key })).status).toBe(200);
    expect((await api("GET", "/v1/search?q=small%20talk", undefined, { key })).status).toBe(200);
    expect((await api("GET", `/v1/conversations/${id}/export?format=jsonl`, undefined, { key })).status).toBe(200);
    // The routes with a query keep their own answers: an unknown field named by the schema.
    const unknown = await api("GET", "/v1/conversations?zzz=1", undefined, { key });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("zzz");
    expect((await api("GET", "/v1/nothing-here?x=1", undefined, { key })).status).toBe(404);
    // No query, or an empty one, is no parameter.
    expect((await api("GET", `/v1/conversations/${id}?`, undefined, { key })).status).toBe(200);
  });
});
