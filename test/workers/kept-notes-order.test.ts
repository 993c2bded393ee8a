// Notes a failed write after a paused step's results kept: a file uploaded later never gets its note
// ahead of them, and the next turn writes them as attachment notes, not as messages of its own.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, DEV_KEY, inConversation, send, textOf, transcript } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** The object's bucket, its batch puts at `seq` failing while `failing.on`. */
function failingBucket(seq: number, failing: { on: boolean }): R2Bucket {
  const key = `/messages/${String(seq).padStart(12, "0")}`;
  return new Proxy(env.BUCKET, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        prop !== "put" || !failing.on || !String(args[0]).includes(key)
          ? value.apply(target, args)
          : Promise.reject(new Error("injected: put failed"));
    },
  });
}

const upload = (id: string, name: string, body: string) =>
  api("POST", `/v1/conversations/${id}/attachments?name=${name}`, body, {
    raw: true,
    headers: { "content-type": "text/plain" },
  });

/** A conversation whose note for first.txt, deferred during a pause, was kept by a failed write. */
async function keptNote(): Promise<string> {
  const id = await createConversation();
  const paused = await api("POST", `/v1/conversations/${id}/messages`, {
    content: `@tool get_weather {"city":"Nuuk"}`,
    tools: [weather],
  });
  expect(paused.status).toBe(200);
  const [call] = paused.json.requires_action!.calls;
  expect((await upload(id, "first.txt", "line one")).status).toBe(201);
  const failing = { on: true };
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
  return id;
}

/** A message's text, as loosely typed as the answer and the socket frames give it. */
const said = (m: { content: readonly { type: string; text?: unknown }[] }): string =>
  m.content.map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");

const noteOf = (all: readonly { role: string; content: { type: string; text?: unknown }[] }[], name: string) =>
  all.findIndex((m) => m.role === "user" && said(m).includes(name));

describe("notes kept by a failed write after a paused step", () => {
  it("stay ahead of a file uploaded later, and the next turn's messages start with its user message", async () => {
    const id = await keptNote();
    expect((await upload(id, "second.txt", "line two")).status).toBe(201);
    const next = await send(id, "after the outage");
    expect(next.status).toBe(200);
    const all = await transcript(id);
    const first = noteOf(all, "first.txt");
    const second = noteOf(all, "second.txt");
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    expect(all.filter((m) => textOf(m).includes("first.txt") || textOf(m).includes("second.txt"))).toHaveLength(2);
    expect(textOf(all[second + 1])).toContain("after the outage");
    const messages = next.json.messages;
    expect(messages[0]?.role).toBe("user");
    expect(said(messages[0]!)).toContain("after the outage");
    expect(messages.some((m) => said(m).includes("first.txt") || said(m).includes("second.txt"))).toBe(false);
  });

  it("reach the sockets as attachment notes when the next turn writes them", async () => {
    const id = await keptNote();
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    expect(sock.status).toBe(101);
    expect((await send(id, "after the outage")).status).toBe(200);
    const note = await sock.next((e) => e.type === "message" && said(e.message).includes("first.txt"));
    expect(note).toMatchObject({ type: "message", turnId: "attachment" });
    sock.ws?.close();
  });
});
