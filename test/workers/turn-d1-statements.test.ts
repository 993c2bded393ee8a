// The D1 round trips a turn costs on its path, worker and conversation object counted apart. A
// warm key (cached per isolate and per colo) and a conversation object that has read the day's
// memory map need none; a project's conversation reads the project and its files in one round
// trip (two sequential reads before). The index outbox's writes are left out: after the reply it
// indexes the new messages into the tenant's cortex shard (no D1) and refreshes the listing row
// (D1), in the background, off the turn's path.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetIsolateKeys } from "../../services/keys/auth";
import { app } from "../../workers/chat/app";
import { spyD1, type D1Spy } from "./d1-spy";
import { api, createConversation, newTenant, send } from "./helpers";

/** One turn with both D1 bindings spied; the counts are taken when the reply has arrived. */
async function measuredTurn(key: string, id: string): Promise<{ worker: D1Spy; objectOnPath: string[] }> {
  const worker = spyD1(env.DB);
  const object = spyD1(env.DB);
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
  await runInDurableObject(stub, (instance) =>
    Object.defineProperty(instance, "env", {
      value: Object.create(env, { DB: { value: object.db } }),
      configurable: true,
      writable: true,
    }),
  );
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "the measured turn" }),
    }),
    { ...env, DB: worker.db } as Env,
    ctx,
  );
  expect(res.status).toBe(200);
  await res.text();
  await waitOnExecutionContext(ctx);
  const outboxListingRow = /^update "conversations" set "title" = \?, "updated_at" = \?, "message_count" = \?/;
  return { worker, objectOnPath: object.roundTrips.filter((q) => !outboxListingRow.test(q)) };
}

describe("a turn's D1 round trips", () => {
  it("are none for a warm key and conversation, even in an isolate that never saw the key", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    expect((await send(id, "warm up: the key is cached and the memory map read", key)).status).toBe(200);
    // A fresh isolate of the same colo: the key comes from the colo's cache, not D1.
    forgetIsolateKeys();
    const turn = await measuredTurn(key, id);
    expect(turn.worker.roundTrips).toEqual([]);
    expect(turn.objectOnPath).toEqual([]);
  });

  it("are one for a project's conversation: the project and its files in a single batch", async () => {
    const key = await newTenant();
    const project = await api("POST", "/v1/projects", { name: "measured" }, { key });
    expect(project.status).toBe(201);
    const made = await api("POST", "/v1/conversations", { title: "in a project", projectId: project.json.id }, { key });
    expect(made.status).toBe(201);
    expect((await send(made.json.id, "warm up", key)).status).toBe(200);
    const turn = await measuredTurn(key, made.json.id);
    expect(turn.worker.roundTrips).toEqual([]);
    expect(turn.objectOnPath).toEqual([expect.stringMatching(/from "projects" .* ; select .* from "attachments" /)]);
  });
});
