// An attachment's note held back while a turn waits on client tools is kept until it is written:
// when its write after the step's results fails, it joins the conversation with the next turn.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createConversation, inConversation, send, textOf, transcript } from "./helpers";

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

describe("a note deferred during a paused turn", () => {
  it.each([
    ["is not lost when its write after the step's results fails: the next turn writes it", false],
    ["is written once when that write landed but its answer was lost", true],
  ])("%s", async (_, landed) => {
    const id = await createConversation();
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool get_weather {"city":"Nuuk"}`,
      tools: [weather],
    });
    expect(paused.status).toBe(200);
    const [call] = paused.json.requires_action!.calls;
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=deferred.txt`, "line one\nline two", {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const failing = { on: true, landed };
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
    const next = await send(id, "after the outage");
    expect(next.status).toBe(200);
    // The kept note is no message of the next turn: its messages start with its user message.
    const [own] = next.json.messages as { role: string; content: { type: string; text?: string }[] }[];
    expect(own?.role).toBe("user");
    expect(own?.content[0]).toMatchObject({ type: "text", text: "after the outage" });
    const all = await transcript(id);
    const notes = all.filter((m) => m.role === "user" && textOf(m).includes("deferred.txt"));
    expect(notes).toHaveLength(1);
    // After the step's results, before the next turn's message.
    const at = all.indexOf(notes[0]);
    expect(all[at - 1].content[0]).toMatchObject({ type: "tool_result", tool_use_id: call.id });
    expect(textOf(all[at + 1])).toContain("after the outage");
  });
});
