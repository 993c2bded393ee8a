// A new Durable Object is placed near the request that created it: the conversation create and
// import paths pass the location hint of the request's origin to the namespace's get(), and the
// routes that reach an existing conversation pass none (a hint counts on the first get() only).
// A channel's object, and a conversation it rotates to, go near the caller of the channel route;
// an automation's run has no caller, so they go near whoever created the automation.
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { runAutomation } from "../../workers/chat/automation-runner";
import { channelObjectName } from "../../durable-objects/channel-do";
import { newTenant, newTenantWithId } from "./helpers";
import type { ChannelDO } from "../../durable-objects/channel-do";
import type { Method, ResponseOf } from "../route-types";

type Options = DurableObjectNamespaceGetDurableObjectOptions | undefined;

/** The real namespace, recording the options of every get() and the arguments of every `resolve` RPC on its stubs. */
function recordingNamespace<N extends DurableObjectNamespace>(real: N) {
  const gets: Options[] = [];
  const resolves: unknown[][] = [];
  const ns = new Proxy(real, {
    get(target, prop) {
      if (prop === "get")
        return (id: DurableObjectId, options?: Options) => {
          gets.push(options);
          const stub = target.get(id, options);
          return new Proxy(stub, {
            get(s, p) {
              if (p === "resolve")
                return (...args: unknown[]) => (
                  resolves.push(args), (s as unknown as { resolve(...a: unknown[]): unknown }).resolve(...args)
                );
              return Reflect.get(s, p);
            },
          });
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ns, gets, resolves };
}

async function call<M extends Method, P extends string>(
  bindings: Partial<Env>,
  method: M,
  path: P,
  key: string,
  cf: Record<string, string> | undefined,
  body?: string,
  type = "application/json",
) {
  const ctx = createExecutionContext();
  const req = new Request(`http://chat.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": type } : {}) },
    body,
    cf,
  } as RequestInit);
  const res = await app.fetch(req, { ...env, ...bindings } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as ResponseOf<M, P> };
}

describe("Durable Object location hints", () => {
  it("create a conversation with the hint of the request's region, and reach it later without one", async () => {
    const key = await newTenant();
    const { ns, gets } = recordingNamespace(env.CONVERSATION);
    const made = await call(
      { CONVERSATION: ns },
      "POST",
      "/v1/conversations",
      key,
      { continent: "EU", country: "PL" },
      JSON.stringify({ title: "from Warsaw" }),
    );
    expect(made.status).toBe(201);
    expect(gets).toEqual([{ locationHint: "eeur" }]);
    const read = await call({ CONVERSATION: ns }, "GET", `/v1/conversations/${made.json.id}`, key, {
      continent: "OC",
      country: "AU",
    });
    expect(read.status).toBe(200);
    expect(gets).toEqual([{ locationHint: "eeur" }, undefined]);
  });

  it("hint an imported conversation too, and give none when the origin is unknown", async () => {
    const key = await newTenant();
    const { ns, gets } = recordingNamespace(env.CONVERSATION);
    const transcript = JSON.stringify({
      messages: [
        { role: "user", content: "hello" },
        { role: "assistant", content: "hi" },
      ],
    });
    expect(
      (
        await call(
          { CONVERSATION: ns },
          "POST",
          "/v1/conversations/import",
          key,
          { continent: "NA", country: "US", longitude: "-122.42" },
          transcript,
        )
      ).status,
    ).toBe(201);
    expect((await call({ CONVERSATION: ns }, "POST", "/v1/conversations", key, undefined, "{}")).status).toBe(201);
    expect(gets.filter((o) => o !== undefined && "locationHint" in o)).toEqual([{ locationHint: "wnam" }]);
  });

  it("place a channel's object and the conversation it starts near the channel route's caller", async () => {
    const key = await newTenant();
    const { ns, gets, resolves } = recordingNamespace(env.CHANNEL);
    const sent = await call(
      { CHANNEL: ns },
      "POST",
      "/v1/channels/tokyo-desk/messages",
      key,
      { continent: "AS", country: "JP" },
      JSON.stringify({ content: "hello" }),
    );
    expect(sent.status).toBe(200);
    expect(gets).toEqual([{ locationHint: "apac" }]);
    expect((resolves[0][0] as { locationHint?: string }).locationHint).toBe("apac");
    // The channel's object hands the hint on to the conversation it creates.
    const conversations = recordingNamespace(env.CONVERSATION);
    const { tenantId } = await newTenantWithId();
    const stub = env.CHANNEL.get(env.CHANNEL.idFromName(channelObjectName(tenantId, "rotating")));
    // The channel's object, with its (protected) env reachable.
    await runInDurableObject(stub, async (object: ChannelDO) => {
      const instance = object as unknown as { env: Env; resolve: ChannelDO["resolve"] };
      const real = instance.env;
      instance.env = { ...real, CONVERSATION: conversations.ns as Env["CONVERSATION"] };
      try {
        await instance.resolve({ tenantId, name: "rotating", now: Date.now(), locationHint: "oc" });
      } finally {
        instance.env = real;
      }
    });
    expect(conversations.gets).toEqual([{ locationHint: "oc" }]);
  });

  it("keep an automation's creator's region for the objects its runs create, and do not show it", async () => {
    const key = await newTenant();
    const made = await call(
      {},
      "POST",
      "/v1/automations",
      key,
      { continent: "SA", country: "BR" },
      JSON.stringify({ name: "daily", channel: "sao-paulo", prompt: "status", schedule: "0 * * * *" }),
    );
    expect(made.status).toBe(201);
    expect(made.json).not.toHaveProperty("locationHint");
    const row = await env.DB.prepare(`SELECT tenant_id AS t, location_hint AS hint FROM automations WHERE id = ?`)
      .bind(made.json.id)
      .first<{ t: string; hint: string }>();
    expect(row!.hint).toBe("sam");
    const runId = `run_${crypto.randomUUID().replace(/-/g, "").slice(0, 26)}`;
    await env.DB.prepare(
      `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at, attempts) VALUES (?, ?, ?, ?, 'queued', ?, 0)`,
    )
      .bind(runId, made.json.id, row!.t, "2033-01-01T00:00:00.000Z", new Date().toISOString())
      .run();
    const { ns, gets, resolves } = recordingNamespace(env.CHANNEL);
    expect(await runAutomation({ ...env, CHANNEL: ns } as Env, runId, 1)).toBeNull();
    expect(gets).toEqual([{ locationHint: "sam" }]);
    expect((resolves[0][0] as { locationHint?: string }).locationHint).toBe("sam");
  });
});
