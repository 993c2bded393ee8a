// A new conversation's Durable Object is placed near the request that created it: the create and
// import paths pass the location hint of the request's origin to the namespace's get(), and the
// routes that reach an existing conversation pass none (a hint counts on the first get() only).
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../workers/chat/app";
import { newTenant } from "./helpers";

/** The real namespace, recording the options of every get(). */
function recordingNamespace(real: Env["CONVERSATION"]) {
  const gets: (DurableObjectNamespaceGetDurableObjectOptions | undefined)[] = [];
  const ns = new Proxy(real, {
    get(target, prop) {
      if (prop === "get") return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => (gets.push(options), target.get(id, options));
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ns, gets };
}

async function call(ns: Env["CONVERSATION"], method: string, path: string, key: string, cf: Record<string, string> | undefined, body?: string, type = "application/json") {
  const ctx = createExecutionContext();
  const req = new Request(`http://chat.test${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": type } : {}) }, body, cf } as RequestInit);
  const res = await app.fetch(req, { ...env, CONVERSATION: ns } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as any };
}

describe("Durable Object location hints", () => {
  it("create a conversation with the hint of the request's region, and reach it later without one", async () => {
    const key = await newTenant();
    const { ns, gets } = recordingNamespace(env.CONVERSATION);
    const made = await call(ns, "POST", "/v1/conversations", key, { continent: "EU", country: "PL" }, JSON.stringify({ title: "from Warsaw" }));
    expect(made.status).toBe(201);
    expect(gets).toEqual([{ locationHint: "eeur" }]);
    const read = await call(ns, "GET", `/v1/conversations/${made.json.id}`, key, { continent: "OC", country: "AU" });
    expect(read.status).toBe(200);
    expect(gets).toEqual([{ locationHint: "eeur" }, undefined]);
  });

  it("hint an imported conversation too, and give none when the origin is unknown", async () => {
    const key = await newTenant();
    const { ns, gets } = recordingNamespace(env.CONVERSATION);
    const transcript = JSON.stringify({ messages: [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }] });
    expect((await call(ns, "POST", "/v1/conversations/import", key, { continent: "NA", country: "US", longitude: "-122.42" }, transcript)).status).toBe(201);
    expect((await call(ns, "POST", "/v1/conversations", key, undefined, "{}")).status).toBe(201);
    expect(gets.filter((o) => o !== undefined && "locationHint" in o)).toEqual([{ locationHint: "wnam" }]);
  });
});
