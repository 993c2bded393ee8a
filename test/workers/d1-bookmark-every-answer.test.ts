// Every /v1 answer carries `x-d1-bookmark`, including those of routes that ran no D1 statement in
// the request's session (no D1 at all, or only a Durable Object's / R2's answer) and were sent no
// bookmark: they answer a real position, which a request sent with it accepts.
import { describe, expect, it } from "vitest";
import { forgetIsolateBookmark } from "../../workers/chat/d1-session";
import { api, createConversation, newTenant, send } from "./helpers";

const BOOKMARK = /^[0-9a-f]{1,16}(-[0-9a-f]{1,64}){1,7}$/i;

describe("the x-d1-bookmark header on every /v1 answer", () => {
  it("is answered by every route, whatever it touched, when none was sent", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await send(id, "hello there", key)).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const calls: { method: "GET" | "POST"; path: string; body?: unknown; headers?: Record<string, string> }[] = [
      { method: "GET", path: "/v1/models" },
      { method: "GET", path: "/v1/usage" },
      { method: "GET", path: "/v1/settings" },
      { method: "GET", path: "/v1/tools" },
      { method: "GET", path: "/v1/search?q=hello" },
      { method: "GET", path: "/v1/keys" },
      { method: "GET", path: "/v1/nope" },
      { method: "GET", path: `/v1/corpus/${today}` },
      { method: "GET", path: `/v1/conversations/${id}/replay` },
      { method: "GET", path: `/v1/conversations/${id}/prompts` },
      { method: "GET", path: `/v1/conversations/${id}/messages` },
      { method: "GET", path: `/v1/conversations/${id}/export` },
      { method: "POST", path: `/v1/conversations/${id}/messages`, body: { content: "as json" } },
      {
        method: "POST",
        path: `/v1/conversations/${id}/messages`,
        body: { content: "as a stream" },
        headers: { accept: "text/event-stream" },
      },
      { method: "GET", path: `/v1/conversations/${id}/ws` },
      { method: "GET", path: "/v1/exports" },
      { method: "GET", path: "/v1/projects" },
      { method: "GET", path: "/v1/automations" },
      { method: "GET", path: "/v1/channels" },
    ];
    const missing: string[] = [];
    for (const call of calls) {
      const r = await api(call.method, call.path, call.body, { key, headers: call.headers });
      const bookmark = r.headers.get("x-d1-bookmark");
      if (!bookmark || !BOOKMARK.test(bookmark)) missing.push(`${call.method} ${call.path} ${r.status}: ${bookmark}`);
    }
    expect(missing).toEqual([]);
  });

  it("is a real position even in an isolate that has seen none yet, which a later request accepts", async () => {
    const key = await newTenant();
    forgetIsolateBookmark();
    const models = await api("GET", "/v1/models", undefined, { key });
    expect(models.status).toBe(200);
    const bookmark = models.headers.get("x-d1-bookmark");
    expect(bookmark).toMatch(BOOKMARK);
    const read = await api("GET", "/v1/conversations?limit=1", undefined, {
      key,
      headers: { "x-d1-bookmark": bookmark ?? "" },
    });
    expect(read.status).toBe(200);
    expect((read.headers.get("x-d1-bookmark") ?? "") >= (bookmark ?? "")).toBe(true);
  });

  it("echoes the bookmark sent when the route ran no statement", async () => {
    const key = await newTenant();
    const made = await api("POST", "/v1/memory", { title: "a note", text: "written" }, { key });
    const sent = made.headers.get("x-d1-bookmark") ?? "";
    expect(sent).toMatch(BOOKMARK);
    const models = await api("GET", "/v1/models", undefined, { key, headers: { "x-d1-bookmark": sent } });
    expect(models.headers.get("x-d1-bookmark")).toBe(sent);
  });
});
