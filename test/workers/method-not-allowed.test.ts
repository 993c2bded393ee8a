// A path that is a route, asked with a method it does not take, is a 405 naming the methods it
// takes (in `Allow`), not a 404 that says nothing is there; a path that is no route stays a 404.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { allowedMethods } from "../../workers/chat/allowed-methods";
import { api, createConversation, newTenant, worker } from "./helpers";

describe("a method a route does not take", () => {
  it("is a 405 with Allow naming the methods the path takes", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const put = await api("PUT", `/v1/conversations/${id}`, { title: "x" }, { key });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, PATCH, DELETE");
    expect(put.json.error).toEqual({
      type: "method_not_allowed",
      message: `/v1/conversations/${id} takes GET, HEAD, PATCH, DELETE, not PUT`,
    });
    const del = await api("DELETE", "/v1/search", undefined, { key });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toBe("GET, HEAD");
  });

  it("stays a 404 on a path no route has, and a 401 without a key", async () => {
    const key = await newTenant();
    const none = await api("GET", "/v1/nothing-here", undefined, { key });
    expect(none.status).toBe(404);
    expect(none.json.error?.type).toBe("not_found");
    const anonymous = await worker().fetch(new Request("http://chat.test/v1/search", { method: "DELETE" }));
    expect(anonymous.status).toBe(401);
  });

  it("follows the router: parameters take one path segment, literal paths match as written, middleware is no method", () => {
    const app = new Hono();
    app.use("/v1/*", async (_c, next) => next());
    app.get("/v1/memory/:id", (c) => c.text(""));
    app.patch("/v1/memory/:id", (c) => c.text(""));
    app.post("/v1/conversations/:id/messages", (c) => c.text(""));
    app.get("/v1/a.b", (c) => c.text(""));
    expect(allowedMethods(app, "/v1/memory/mem_1")).toEqual(["GET", "HEAD", "PATCH"]);
    expect(allowedMethods(app, "/v1/memory/mem_1/extra")).toEqual([]);
    expect(allowedMethods(app, "/v1/conversations/c1/messages")).toEqual(["POST"]);
    expect(allowedMethods(app, "/v1/axb")).toEqual([]);
    expect(allowedMethods(app, "/v1/other")).toEqual([]);
  });
});
