// A conversation answers like one that never existed from the moment its delete starts: its
// listing row goes with its cortex rows, before the purge's R2 steps (attachments, snapshots,
// the record), so a delete cut short there (R2 failing, 500) lists it nowhere while the alarm
// finishes the purge. (A failure of the listing batch itself keeps it listed until that retry.)
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { upload } from "./attachment-helpers";
import { stubOf } from "./fold-scripted";
import { api, createConversation, newTenant, send } from "./helpers";
import { swapBinding } from "./object-bindings";

const listedIds = async (key: string, order: "created" | "activity") =>
  (
    (await api("GET", `/v1/conversations?order=${order}&limit=100`, undefined, { key })).json as {
      data: { id: string }[];
    }
  ).data.map((c) => c.id);

describe("a delete cut short in its R2 steps", () => {
  it("lists the conversation nowhere, its channel names none, and the alarm finishes", async () => {
    const key = await newTenant();
    const channel = await api("POST", "/v1/channels/gone-soon/messages", { content: "hello" }, { key });
    expect(channel.status).toBe(200);
    const id = channel.json.conversationId as string;
    const listedTitle = (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title;
    const other = await createConversation(undefined, key);
    expect((await send(other, "stays", key)).status).toBe(200);
    expect((await upload(id, "notes.txt", "kept notes", "text/plain", key)).status).toBe(201);
    // The object's first R2 listing fails through all its retries (4 tries): the purge stops at its
    // first R2 step. Later calls work, so the alarm's run can finish.
    let failures = 4;
    await swapBinding(
      id,
      "BUCKET",
      (bucket: R2Bucket) =>
        new Proxy(bucket, {
          get(target, prop) {
            const value = Reflect.get(target, prop);
            if (prop === "list" && failures > 0)
              return async () => {
                failures--;
                throw new Error("injected: R2 down");
              };
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(500);
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
    expect(await listedIds(key, "created")).toEqual([other]);
    expect(await listedIds(key, "activity")).toEqual([other]);
    // The tombstone keeps the title the purge read as the listing row went: the resumed purge
    // forgets only the stored memory maps naming it, not every map of the tenant.
    const tomb = await runInDurableObject(stubOf(id), (_o, state) =>
      JSON.parse(state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'tombstone'").one().value),
    );
    expect(tomb.title).toBe(listedTitle);
    const named = await api("GET", "/v1/channels", undefined, { key });
    expect(JSON.stringify(named.json)).not.toContain(id);
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
  });
});
