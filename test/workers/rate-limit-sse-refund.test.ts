import { describe, expect, it } from "vitest";
import { callWith } from "./app-with-vars";
import { api, createConversation, newTenant } from "./helpers";
import { swapBinding } from "./object-bindings";

const LIMITS = {
  RATE_LIMIT_PER_MINUTE: "1000",
  TURN_RATE_LIMIT_PER_MINUTE: "1",
  TENANT_TURN_RATE_LIMIT_PER_MINUTE: "0",
};

const turn = (key: string, id: string, body: { content: string; attachments?: string[] }, sse = false) =>
  callWith(LIMITS, {
    method: "POST",
    path: `/v1/conversations/${id}/messages`,
    key,
    body,
    ...(sse ? { headers: { accept: "text/event-stream" } } : {}),
  });

/** The object's head writes fail (past their retries): a turn naming a file is refused before its model loop. */
const breakHeadWrites = (id: string) =>
  swapBinding(
    id,
    "BUCKET",
    (bucket: R2Bucket) =>
      new Proxy(bucket, {
        get(target, prop) {
          if (prop === "put")
            return async (objectKey: string, ...rest: unknown[]) => {
              if (objectKey.endsWith("head.json")) throw new Error("injected: R2 down");
              return (target.put as (...args: unknown[]) => Promise<R2Object | null>)(objectKey, ...rest);
            };
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
  );

describe("an SSE turn that never started for want of storage", () => {
  it("gives its turn token back once its stream ends: it saved nothing and called no model", async () => {
    const key = await newTenant();
    const broken = await createConversation(undefined, key);
    const other = await createConversation(undefined, key);
    // A file of another conversation: naming it in a turn activates its tools, a head write before the model loop.
    const source = await createConversation(undefined, key);
    const up = await api("POST", `/v1/conversations/${source}/attachments?name=notes.txt`, "line one\nline two\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    await breakHeadWrites(broken);
    // callWith reads the stream out and waits for the request's background work.
    const sse = await turn(key, broken, { content: "read my notes", attachments: [up.json.id] }, true);
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect((await api("GET", `/v1/conversations/${broken}/messages`, undefined, { key })).json.data).toEqual([]);
    // The key's one turn of the minute is still there.
    expect((await turn(key, other, { content: "runs" })).status).toBe(200);
    expect((await turn(key, other, { content: "over the limit" })).status).toBe(429);
  });

  it("keeps the token of an SSE turn that ran", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await turn(key, id, { content: "runs over SSE" }, true)).status).toBe(200);
    expect((await turn(key, id, { content: "over the limit" })).status).toBe(429);
  });
});
