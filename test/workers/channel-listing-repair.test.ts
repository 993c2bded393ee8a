// The channel's listing row names its conversation even when the one in-line write that should have
// named it (a create's or a rotation's) failed: the object then already holds the new conversation,
// no later message moves it, and only the object's next listing write (its alarm) can name it. A
// conversation deleted before that repair is not put back on the listing.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { channelObjectName } from "../../durable-objects/channel-do";
import { api, newTenantWithId } from "./helpers";

// An object's env is swapped on the live instance (the objects read their bindings at each use).
interface WithEnv {
  env: Env;
}
const inObject = runInDurableObject as unknown as <R>(
  stub: DurableObjectStub,
  fn: (instance: WithEnv, state: DurableObjectState) => Promise<R>,
) => Promise<R>;

const channelStub = (tenantId: string, name: string) =>
  env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, name))) as unknown as DurableObjectStub;

/** The object's D1, whose next upsert of a channels row throws (through a session too, as the object writes). */
function failingOnce(real: D1Database): D1Database {
  let failed = false;
  const wrap = <T extends D1Database | D1DatabaseSession>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === "prepare")
          return (sql: string) => {
            if (!failed && sql.trimStart().startsWith("INSERT INTO channels")) {
              failed = true;
              throw new Error("D1 is unreachable (test)");
            }
            return t.prepare(sql);
          };
        if (prop === "withSession" && "withSession" in t) return (start?: string) => wrap(t.withSession(start));
        const v: unknown = Reflect.get(t, prop);
        return typeof v === "function" ? (v as (...x: unknown[]) => unknown).bind(t) : v;
      },
    });
  return wrap(real);
}

/** Sends one message with the object's next channels upsert failing; the object's D1 is restored after. */
async function sendWithFailingUpsert(stub: DurableObjectStub, message: { key: string; channel: string }) {
  const real = await inObject(stub, async (instance) => {
    const before = instance.env;
    instance.env = { ...before, DB: failingOnce(before.DB) };
    return before;
  });
  try {
    return await api("POST", `/v1/channels/${message.channel}/messages`, { content: "fails" }, { key: message.key });
  } finally {
    await inObject(stub, async (instance) => {
      instance.env = real;
    });
  }
}

async function listedConversation(key: string, name: string): Promise<unknown> {
  const listing = await api("GET", "/v1/channels?limit=100", undefined, { key });
  expect(listing.status).toBe(200);
  const row = listing.json.data.find((c) => c.name === name);
  expect(row, `${name} is not listed`).toBeTruthy();
  return row!.conversationId;
}

describe("a channel whose create or rotation failed to write its listing row", () => {
  it("a new channel: the listing names its conversation after the next message's alarm", async () => {
    const { tenantId, key } = await newTenantWithId();
    const stub = channelStub(tenantId, "flaky");
    const one = await sendWithFailingUpsert(stub, { key, channel: "flaky" });
    expect(one.status).toBe(500);
    const two = await api("POST", "/v1/channels/flaky/messages", { content: "two" }, { key });
    expect(two.status, two.text).toBe(200);
    await runDurableObjectAlarm(stub);
    const shown = await api("GET", "/v1/channels/flaky", undefined, { key });
    expect(shown.json.conversationId).toBe(two.json.conversationId);
    expect(await listedConversation(key, "flaky")).toBe(two.json.conversationId);
  });

  it("with no later message, the failed write's own alarm repairs the listing", async () => {
    const { tenantId, key } = await newTenantWithId();
    const stub = channelStub(tenantId, "flaky");
    const one = await sendWithFailingUpsert(stub, { key, channel: "flaky" });
    expect(one.status).toBe(500);
    // Run now, unless it already ran by itself (a second after the failure).
    await runDurableObjectAlarm(stub);
    const shown = (await api("GET", "/v1/channels/flaky", undefined, { key })).json.conversationId;
    expect(shown).toBeTruthy();
    expect(await listedConversation(key, "flaky")).toBe(shown);
  });

  it("a rotation: the listing moves to the new conversation", async () => {
    const { tenantId, key } = await newTenantWithId();
    const stub = channelStub(tenantId, "flaky");
    const set = await api("PATCH", "/v1/channels/flaky", { rotationSeconds: 1 }, { key });
    expect(set.status, set.text).toBe(200);
    const one = await api("POST", "/v1/channels/flaky/messages", { content: "one" }, { key });
    expect(one.status, one.text).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    const two = await sendWithFailingUpsert(stub, { key, channel: "flaky" });
    expect(two.status).toBe(500);
    const three = await api("POST", "/v1/channels/flaky/messages", { content: "three" }, { key });
    expect(three.status, three.text).toBe(200);
    expect(three.json.conversationId).not.toBe(one.json.conversationId);
    await runDurableObjectAlarm(stub);
    const shown = await api("GET", "/v1/channels/flaky", undefined, { key });
    expect(shown.json.conversationId).toBe(three.json.conversationId);
    expect(await listedConversation(key, "flaky")).toBe(three.json.conversationId);
  });

  it("a conversation deleted before the repair is not put back on the listing", async () => {
    const { tenantId, key } = await newTenantWithId();
    const stub = channelStub(tenantId, "flaky");
    const one = await sendWithFailingUpsert(stub, { key, channel: "flaky" });
    expect(one.status).toBe(500);
    // The repair waits until the conversation is gone: its alarm is held back meanwhile.
    await inObject(stub, async (_i, state) => state.storage.deleteAlarm());
    const made = (await api("GET", "/v1/channels/flaky", undefined, { key })).json.conversationId;
    expect(made).toBeTruthy();
    const del = await api("DELETE", `/v1/conversations/${made}`, undefined, { key });
    expect(del.status).toBe(204);
    await inObject(stub, async (_i, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await listedConversation(key, "flaky")).toBeNull();
    expect((await api("GET", "/v1/channels/flaky", undefined, { key })).json.conversationId).toBeNull();
    // The next message starts a new conversation, and the listing names it.
    const next = await api("POST", "/v1/channels/flaky/messages", { content: "again" }, { key });
    expect(next.status, next.text).toBe(200);
    expect(next.json.conversationId).not.toBe(made);
    expect(await listedConversation(key, "flaky")).toBe(next.json.conversationId);
  });
});
