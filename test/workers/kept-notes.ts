// A conversation whose attachment note, deferred while a turn waited on a client tool, was kept by
// a write that failed after the step's results (deferred-note-write-fails, kept-notes-order).
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { api, createConversation, inConversation } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** The object's bucket, its batch puts at `seq` failing while `failing.on` (`landed`: written, the answer lost). */
function failingBucket(seq: number, failing: { on: boolean; landed?: boolean }): R2Bucket {
  const key = `/messages/${String(seq).padStart(12, "0")}`;
  return new Proxy(env.BUCKET, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        prop !== "put" || !failing.on || !String(args[0]).includes(key)
          ? value.apply(target, args)
          : failing.landed
            ? Promise.resolve(value.apply(target, args)).then(() => Promise.reject(new Error("injected: answer lost")))
            : Promise.reject(new Error("injected: put failed"));
    },
  });
}

/** Uploads a text file to conversation `id`. */
export const upload = (id: string, name: string, body: string) =>
  api("POST", `/v1/conversations/${id}/attachments?name=${name}`, body, {
    raw: true,
    headers: { "content-type": "text/plain" },
  });

/**
 * A conversation paused on a client tool, a file `name` uploaded during the pause, and the step's
 * results posted while the write after them fails (502): the file's note is kept. `landed`: that
 * write landed, only its answer was lost. Answers the conversation and the tool call's id.
 */
export async function keptNote(opts: { name: string; landed?: boolean }): Promise<{ id: string; callId: string }> {
  const id = await createConversation();
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: `@tool get_weather {"city":"Nuuk"}`,
    tools: [weather],
  });
  expect(paused.status).toBe(200);
  const [call] = paused.json.requires_action!.calls;
  expect((await upload(id, opts.name, "line one\nline two")).status).toBe(201);
  const failing = { on: true, landed: opts.landed ?? false };
  const bucket = failingBucket(4, failing);
  await inConversation(id, (instance) => {
    Object.defineProperty(instance, "env", {
      value: Object.create(env, { BUCKET: { value: bucket } }),
      configurable: true,
      writable: true,
    });
  });
  const results = await api("POST", `/v1/conversations/${id}/tool-results`, {
    results: [{ tool_use_id: call.id, content: "ice" }],
  });
  expect(results.status).toBe(502);
  failing.on = false;
  return { id, callId: call.id };
}
