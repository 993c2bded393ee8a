// Every /v1 answer is a tenant's data, read with a key: it carries `cache-control: no-store`, so no
// browser or proxy between the client and the edge keeps a transcript, a replay or a file's bytes
// (only the web UI asked for no-store itself). The SSE stream keeps its own `no-cache`.
import { describe, expect, it } from "vitest";
import { upload } from "./attachment-helpers";
import { api, createConversation, newTenant, send } from "./helpers";

describe("authenticated answers are not stored by caches", () => {
  it("transcripts, replays, listings, file bytes and errors say no-store", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await send(id, "hello", key)).status).toBe(200);
    const file = await upload(id, "notes.txt", "private notes", "text/plain", key);
    const answers = {
      messages: await api("GET", `/v1/conversations/${id}/messages`, undefined, { key }),
      replay: await api("GET", `/v1/conversations/${id}/replay`, undefined, { key }),
      list: await api("GET", "/v1/conversations", undefined, { key }),
      content: await api("GET", `/v1/conversations/${id}/attachments/${file.json.id}/content`, undefined, { key }),
      missing: await api("GET", "/v1/conversations/conv_nope", undefined, { key }),
      unauthorized: await api("GET", "/v1/conversations", undefined, { key: "sk-wrong" }),
    };
    const seen = Object.fromEntries(
      Object.entries(answers).map(([k, r]) => [k, [r.status, r.headers.get("cache-control")]]),
    );
    expect(seen).toEqual({
      messages: [200, "no-store"],
      replay: [200, "no-store"],
      list: [200, "no-store"],
      content: [200, "no-store"],
      missing: [404, "no-store"],
      unauthorized: [401, "no-store"],
    });
  });

  it("a refusal before anything else (431, headers too large) says no-store too", async () => {
    const r = await api("GET", "/v1/conversations", undefined, { headers: { "x-filler": "x".repeat(40 * 1024) } });
    expect([r.status, r.headers.get("cache-control")]).toEqual([431, "no-store"]);
  });

  it("the SSE stream keeps no-cache", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "hi" },
      {
        key,
        headers: { accept: "text/event-stream" },
      },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-cache");
  });
});
