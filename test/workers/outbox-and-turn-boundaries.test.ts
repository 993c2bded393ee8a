// Boundaries of the conversation object's housekeeping: the indexing outbox's alarm once caught up
// and after a failed run under a long client-tool wait, a rename landing while a run writes the
// listing row, the automatic title of a first turn that paused on a client tool, and a fold reply
// cut off at max_tokens exactly at its cap.
import Anthropic from "@anthropic-ai/sdk";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import { DEFAULT_TITLE } from "../../core/title";
import { FORGET_MEMORY_MAP } from "../../durable-objects/conversation/index-outbox";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leasedFold } from "./fold-scripted";
import { api, createConversation, eventually, inConversation, newTenant, replyText, send, transcript } from "./helpers";
import { swapBinding } from "./object-bindings";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** A D1 whose batches (the listing row's write) reject. */
const failingBatches = (db: D1Database): D1Database =>
  new Proxy(db, {
    get(target, prop) {
      if (prop === "batch") return async () => Promise.reject(new Error("injected: D1 batch fails"));
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });

/**
 * Holds the object's first `held` D1 batches (the listing row's write), each until its own release:
 * `gates[n]` is the nth batch's, `reached` resolving when it waits; later batches pass. The gates
 * are made here, in the test's context, as the object may only await what that context resolves.
 */
async function holdBatches(id: string, held: number) {
  const gates = Array.from({ length: held }, () => {
    let arrive!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (arrive = r));
    const open = new Promise<void>((r) => (release = r));
    return { reached, arrive, open, release };
  });
  let calls = 0;
  await swapBinding(
    id,
    "DB",
    (db) =>
      new Proxy(db, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop === "batch")
            return async (statements: D1PreparedStatement[]) => {
              const gate = gates[calls++];
              if (gate) {
                gate.arrive();
                await gate.open;
              }
              return target.batch(statements);
            };
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
  );
  return gates;
}

describe("the indexing outbox's alarm", () => {
  it("is cleared once a run has indexed every message (no follow-up run is asked for)", async () => {
    const id = await createConversation();
    expect((await send(id, "hello there")).status).toBe(200);
    const alarm = await inConversation(id, async (i, state) => {
      await i.outbox.settled();
      await i.outbox.pending();
      return { at: await state.storage.getAlarm(), indexed: i.store.indexedThrough(), last: i.store.lastSeq() };
    });
    expect(alarm.last).toBeGreaterThan(0);
    expect(alarm.indexed).toBe(alarm.last);
    expect(alarm.at).toBeNull();
  });

  it("after a failed run, comes at the retry, not at a long client-tool wait's end", async () => {
    const id = await createConversation({ clientToolTimeoutSeconds: 600 });
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool get_weather {"city":"reykjavik-retry-before-wait"}`,
      tools: [weather],
    });
    expect(paused.json.stop_reason).toBe("requires_action");
    const expiresAt = Date.parse(paused.json.requires_action!.expiresAt);
    // Caught up: the alarm is the wait's end, ten minutes ahead.
    await eventually(async () => (await inConversation(id, (_i, state) => state.storage.getAlarm())) === expiresAt);
    const out = await inConversation(id, async (i, state) => {
      const before = i.env;
      // The next run's D1 write fails (an outage).
      i.env = { ...before, DB: failingBatches(before.DB) };
      const started = Date.now();
      try {
        await i.outbox.pending();
      } finally {
        i.env = before;
      }
      return { at: await state.storage.getAlarm(), started };
    });
    expect(out.at).not.toBeNull();
    // The retry (30 s), well before the wait's end.
    expect(out.at!).toBeLessThanOrEqual(Date.now() + 30_000);
    expect(out.at!).toBeGreaterThanOrEqual(out.started + 29_000);
    expect(out.at!).toBeLessThan(expiresAt);
  });
});

describe("a rename landing while a run writes the listing row", () => {
  it("keeps the rename's forget item for the next run, which forgets its titles", async () => {
    // A tenant of its own: no stored memory map of its names one of the titles, so the listing row's
    // writes are the object's only D1 batches.
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    await inConversation(id, (i) => i.outbox.settled());
    const gates = await holdBatches(id, 2);
    try {
      // The first rename: its run read the forget item and waits on the listing row's write.
      expect((await api("PATCH", `/v1/conversations/${id}`, { title: "First" }, { key })).status).toBe(200);
      await gates[0].reached;
      // The second lands now: the item names both titles since the last forget.
      expect((await api("PATCH", `/v1/conversations/${id}`, { title: "Second" }, { key })).status).toBe(200);
      gates[0].release();
      // The run asked for by the second rename reads the outbox before its write.
      await gates[1].reached;
      const waiting = await inConversation(id, (i) => i.store.outbox().find((item) => item.key === FORGET_MEMORY_MAP));
      expect(waiting?.payload).toEqual({ titles: ["test", "First"] });
      gates[1].release();
      await inConversation(id, (i) => i.outbox.settled());
      // That run forgot them: the item is gone.
      expect(await inConversation(id, (i) => i.store.outbox().some((item) => item.key === FORGET_MEMORY_MAP))).toBe(
        false,
      );
    } finally {
      for (const g of gates) g.release();
      await inConversation(id, (i) => {
        i.env = Object.getPrototypeOf(i.env) as Env;
      });
    }
  });
});

describe("the automatic title of a first turn that paused on a client tool", () => {
  it("waits for the turn to end: none while it waits, one after its results", async () => {
    const created = await api("POST", "/v1/conversations", {});
    expect(created.json.title).toBe(DEFAULT_TITLE);
    const id = created.json.id;
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `What is the weather in Lisbon today\n@reply-chars 120\n@tool get_weather {"city":"Lisbon"}`,
      tools: [weather],
    });
    expect(paused.json.stop_reason).toBe("requires_action");
    // The paused reply has words of its own: the first exchange is there to be titled already.
    const reply = (await transcript(id)).find((m) => m.role === "assistant");
    expect(replyText(reply!).trim()).not.toBe("");
    const during = await inConversation(id, async (i) => {
      await i.outbox.settled();
      return i.store.titleSource();
    });
    expect(during).toBeNull();
    expect((await api("GET", `/v1/conversations/${id}`)).json.title).toBe(DEFAULT_TITLE);
    const [call] = paused.json.requires_action!.calls;
    const resumed = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "sunny, 24 C" }],
    });
    expect(resumed.status).toBe(200);
    const title = await eventually(async () => {
      const t = (await api("GET", `/v1/conversations/${id}`)).json.title;
      return t !== DEFAULT_TITLE ? t : null;
    });
    expect(title).toMatch(/Lisbon/);
    expect(await inConversation(id, (i) => i.store.titleSource())).toBe("auto");
  });
});

describe("a fold reply cut off at max_tokens exactly at its cap", () => {
  it("is the summary, committed on the first delivery", async () => {
    const job = await leasedFold({ summaryMaxChars: 300 });
    const caps: number[] = [];
    const client = new Anthropic({
      apiKey: "offline",
      baseURL: OFFLINE_BASE_URL,
      maxRetries: 0,
      fetch: async (_url: string | URL | Request, init?: RequestInit) => {
        const body = JSON.parse(String(init?.body)) as { system: { text: string }[] };
        // The cap the fold asked for (core/fold.ts foldSystemPrompt): the reply is exactly that long.
        const cap = Number(/at most (\d+) characters/.exec(body.system[0].text)![1]);
        caps.push(cap);
        const text = `${"The user set the launch plan for topic-3. ".repeat(Math.ceil(cap / 40) + 1).slice(0, cap - 1)}.`;
        return Response.json({
          id: "msg_scripted",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5-5",
          content: [{ type: "text", text }],
          stop_reason: "max_tokens",
          stop_sequence: null,
          usage: { input_tokens: 1500, output_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        });
      },
    });
    expect(await runFoldJob(job, env as Env, { client, attempts: 1 })).toEqual({ applied: true, reason: "folded" });
    expect(caps).toHaveLength(1);
    const meta = (await api("GET", `/v1/conversations/${job.conversationId}`)).json;
    expect(meta.foldCount).toBe(1);
    expect(meta.summary!.length).toBe(caps[0]);
  });
});
