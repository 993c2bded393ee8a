// Automatic titles: after the first exchange of an untitled conversation the server asks the
// conversation's model for a title (the offline model answers deterministically: the first six
// words of the first prompt), off the turn's path; a title the user set is never replaced, and a
// failed title call leaves the title unset and the turn untouched.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { catalogEntry } from "../../core/models/lookup";
import { createModelClient } from "../../core/model-client";
import { DEFAULT_TITLE } from "../../core/title";
import { AutoTitler } from "../../durable-objects/conversation/auto-title";
import type { ConversationDO } from "../../durable-objects/conversation/conversation-do";
import type { ConversationStore } from "../../durable-objects/conversation/conversation-store";
import type { IndexOutbox } from "../../durable-objects/conversation/index-outbox";
import type { ObjectScope } from "../../durable-objects/conversation/object-scope";
import type { ConversationRecord } from "../../durable-objects/conversation/record";
import { upload } from "./attachment-helpers";
import { api, connectSocket, inConversation, newTenant, send } from "./helpers";

/** The object's private parts this test drives (reached as the tests of fold.test.ts do). */
interface TitleInternals {
  scope: ObjectScope;
  record: ConversationRecord;
  outbox: IndexOutbox;
  store: ConversationStore;
  patch: ConversationDO["patch"];
}
type TitleClient = Parameters<AutoTitler["afterTurn"]>[0];
const inObject = runInDurableObject as unknown as <R>(
  stub: DurableObjectStub,
  fn: (instance: TitleInternals) => Promise<R>,
) => Promise<R>;

const eventually = async <T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
};

async function untitled(key: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", {}, { key });
  expect(r.status).toBe(201);
  expect(r.json.title).toBe(DEFAULT_TITLE);
  return r.json.id;
}

/** An untitled conversation holding one imported exchange, for a title call driven by hand. */
async function untitledWithExchange(key: string): Promise<string> {
  const id = await untitled(key);
  const messages = [
    { role: "user", text: "Compare tide tables" },
    { role: "assistant", text: "Sure." },
  ];
  expect((await api("POST", `/v1/conversations/${id}/import`, { messages }, { key })).status).toBe(201);
  return id;
}

const titleOf = async (id: string, key: string) =>
  (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title as string;
const listedTitle = async (id: string, key: string) =>
  (await api("GET", "/v1/conversations?limit=100", undefined, { key })).json.data.find((c) => c.id === id)
    ?.title as string;
// Typed loosely: the object's RPC types are too deep for runInDurableObject's inference.
const stubOf = (id: string): DurableObjectStub =>
  env.CONVERSATION.get(env.CONVERSATION.idFromName(id)) as unknown as DurableObjectStub;

/** Waits until the object has tried its automatic title (or the user's title made it moot). */
const titleSource = (id: string): Promise<string | null> =>
  inConversation(id, async (instance) => instance.store.titleSource());
const titleTried = (id: string) =>
  eventually(
    () => titleSource(id),
    (s) => s !== null,
  );

describe("automatic titles", () => {
  it("the model titles an untitled conversation after its first exchange, in the conversation and the listing", async () => {
    const key = await newTenant();
    const id = await untitled(key);
    const r = await send(id, "How do rivers carve canyons?\n@reply-chars 200", key);
    expect(r.status).toBe(200);
    expect(
      await eventually(
        () => titleOf(id, key),
        (t) => t !== DEFAULT_TITLE,
      ),
    ).toBe("How do rivers carve canyons");
    expect(
      await eventually(
        () => listedTitle(id, key),
        (t) => t !== DEFAULT_TITLE,
      ),
    ).toBe("How do rivers carve canyons");
    // Once: a later turn does not title it again.
    await send(id, "And glaciers?", key);
    await new Promise((r) => setTimeout(r, 300));
    expect(await titleOf(id, key)).toBe("How do rivers carve canyons");
  });

  it("titles from the person's words when a file's note comes first: uploaded before the prompt, or named with it", async () => {
    const key = await newTenant();
    // Uploaded first: its note is a user message of its own, before the prompt.
    const first = await untitled(key);
    expect((await upload(first, "q3-report.txt", "line one\nline two\n", "text/plain", key)).status).toBe(201);
    expect((await send(first, "Wie backe ich Brot ohne Hefe?", key)).status).toBe(200);
    // Named with the prompt (the web UI's way): the note rides in the prompt's message, ahead of its words.
    const named = await untitled(key);
    const up = await api("POST", `/v1/conversations/${named}/attachments?name=q3-report.txt&attach=false`, "one\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const turn = await api(
      "POST",
      `/v1/conversations/${named}/messages`,
      { content: "Wie backe ich Brot ohne Hefe?", attachments: [up.json.id] },
      { key },
    );
    expect(turn.status).toBe(200);
    for (const id of [first, named])
      expect(
        await eventually(
          () => titleOf(id, key),
          (t) => t !== DEFAULT_TITLE,
        ),
      ).toBe("Wie backe ich Brot ohne Hefe");
  });

  it("announces the title on the conversation's open sockets: the model's (auto), then a rename (user)", async () => {
    const key = await newTenant();
    const id = await untitled(key);
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    expect(sock.status).toBe(101);
    sock.ws!.send(JSON.stringify({ type: "send", content: "How do glaciers move?" }));
    expect(await sock.next((e) => e.type === "title_changed")).toEqual({
      type: "title_changed",
      title: "How do glaciers move",
      source: "auto",
    });
    expect((await api("PATCH", `/v1/conversations/${id}`, { title: "Ice" }, { key })).status).toBe(200);
    expect(await sock.next((e) => e.type === "title_changed" && e.title === "Ice")).toEqual({
      type: "title_changed",
      title: "Ice",
      source: "user",
    });
    // A settings change is not a rename: nothing more is announced.
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 8 } }, { key })).status).toBe(
      200,
    );
    await send(id, "And icebergs?", key);
    expect(sock.events.filter((e) => e.type === "title_changed")).toHaveLength(2);
    sock.ws!.close();
  });

  it("meters the title call's tokens in GET /v1/usage as a title, once per conversation", async () => {
    const key = await newTenant();
    const id = await untitled(key);
    const first = await send(id, "How do tides follow the moon?", key);
    expect(first.status).toBe(200);
    const report = await eventually(
      async () => (await api("GET", "/v1/usage", undefined, { key })).json,
      (u) => u.total?.titles === 1 && u.total?.turns === 1,
    );
    expect(report.total).toMatchObject({ turns: 1, titles: 1 });
    const turn = first.json.usage!;
    // The ledger holds the turn's tokens and the title call's on top.
    expect(report.total.input_tokens).toBeGreaterThan(turn.input_tokens);
    expect(report.total.output_tokens).toBeGreaterThan(turn.output_tokens);
    expect(report.total.cost_usd).toBeGreaterThan(turn.cost_usd!);
    expect(report.conversations).toEqual([expect.objectContaining({ conversationId: id, turns: 1, titles: 1 })]);
    // A later turn is metered; the title is not asked for again.
    await send(id, "And the sun?", key);
    const later = await eventually(
      async () => (await api("GET", "/v1/usage", undefined, { key })).json,
      (u) => u.total?.turns === 2,
    );
    expect(later.total).toMatchObject({ turns: 2, titles: 1 });
  });

  it("never replaces a title the user set, by POST or by PATCH (even to the default's words)", async () => {
    const key = await newTenant();
    const named = (await api("POST", "/v1/conversations", { title: "Mine" }, { key })).json.id;
    const patched = await untitled(key);
    expect((await api("PATCH", `/v1/conversations/${patched}`, { title: DEFAULT_TITLE }, { key })).status).toBe(200);
    for (const id of [named, patched]) expect((await send(id, "Plan a trip to Lisbon", key)).status).toBe(200);
    await titleTried(patched);
    await new Promise((r) => setTimeout(r, 300));
    expect(await titleOf(named, key)).toBe("Mine");
    expect(await titleOf(patched, key)).toBe(DEFAULT_TITLE);
  });

  it("a failed title call leaves the title unset and the turn as it was", async () => {
    const key = await newTenant();
    const id = await untitled(key);
    // The line fails side calls only (summaries, titles); the turn itself is answered.
    const r = await send(id, "Hello there\n@model-error 500 summarize", key);
    expect(r.status).toBe(200);
    expect(r.text).toContain('"stop_reason":"end_turn"');
    expect(await titleTried(id)).toBe("auto");
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await titleOf(id, key)).toBe(DEFAULT_TITLE);
  });

  it("a rename that lands while the title call runs wins; a thrown call is swallowed", async () => {
    const key = await newTenant();
    const id = await untitled(key);
    expect(
      (
        await api(
          "POST",
          `/v1/conversations/${id}/import`,
          {
            messages: [
              { role: "user", text: "Compare tide tables" },
              { role: "assistant", text: "Sure." },
            ],
          },
          { key },
        )
      ).status,
    ).toBe(201);
    await api("GET", `/v1/conversations/${id}`, undefined, { key });
    const model = catalogEntry("claude-sonnet-5-5")!;
    const result = await inObject(stubOf(id), async (instance) => {
      const titler = new AutoTitler(instance.scope, instance.record, instance.outbox);
      const failing = {
        messages: { create: async () => Promise.reject(new Error("provider down")) },
      } as unknown as TitleClient;
      const afterFailure = await titler.afterTurn(failing, model);
      const titleAfterFailure = instance.record.head!.title;
      // Tried once: a second call does nothing until the flag is cleared (as on a fresh object here).
      instance.scope.ctx.storage.sql.exec(`DELETE FROM kv WHERE key = 'title_source'`);
      const real = createModelClient(env);
      const racing = {
        messages: {
          create: async (...args: unknown[]) => {
            const reply = await (real.messages.create as (...a: unknown[]) => Promise<unknown>)(...args);
            await instance.patch(
              { tenantId: instance.record.head!.tenantId, conversationId: id },
              { title: "Renamed meanwhile" },
            );
            return reply;
          },
        },
      } as unknown as TitleClient;
      const afterRace = await titler.afterTurn(racing, model);
      return { afterFailure, titleAfterFailure, afterRace, final: instance.record.head!.title };
    });
    expect(result).toEqual({
      afterFailure: null,
      titleAfterFailure: DEFAULT_TITLE,
      afterRace: null,
      final: "Renamed meanwhile",
    });
    // The answered call is metered though its title lost; the thrown one spent nothing to meter.
    const report = await eventually(
      async () => (await api("GET", "/v1/usage", undefined, { key })).json,
      (u) => u.total?.titles === 1,
    );
    expect(report.total).toMatchObject({ turns: 0, titles: 1 });
    expect(report.total.output_tokens).toBeGreaterThan(0);
  });

  it("a refused title call names nothing with its words, and a refusal the API does not bill costs nothing", async () => {
    const key = await newTenant();
    const model = catalogEntry("claude-sonnet-5-5")!;
    const refusing = (content: unknown[], category: string) =>
      ({
        messages: {
          create: async () => ({
            id: "msg_refused",
            type: "message",
            role: "assistant",
            model: model.id,
            content,
            stop_reason: "refusal",
            stop_sequence: null,
            stop_details: { type: "refusal", category, explanation: null },
            usage: { input_tokens: 900, output_tokens: content.length ? 5 : 0 },
          }),
        },
      }) as unknown as TitleClient;
    const cases = [
      { client: refusing([{ type: "text", text: "I would rather not title" }], "bio"), billed: true },
      { client: refusing([], "cyber"), billed: false },
    ];
    for (const c of cases) {
      const id = await untitledWithExchange(key);
      const titled = await inObject(stubOf(id), async (instance) =>
        new AutoTitler(instance.scope, instance.record, instance.outbox).afterTurn(c.client, model),
      );
      expect(titled).toBeNull();
      expect(await titleOf(id, key)).toBe(DEFAULT_TITLE);
      const report = await eventually(
        async () => (await api("GET", "/v1/usage", undefined, { key })).json,
        (u) => u.conversations?.some((row) => row.conversationId === id),
      );
      const row = report.conversations.find((r) => r.conversationId === id)!;
      expect(row).toMatchObject({ titles: 1, input_tokens: 900 });
      if (c.billed) expect(row.cost_usd).toBeGreaterThan(0);
      else expect(row.cost_usd).toBe(0);
    }
  });

  it("a title cut off (max_tokens, model_context_window_exceeded) is no title: unset, tried once, metered", async () => {
    const key = await newTenant();
    const model = catalogEntry("claude-sonnet-5-5")!;
    for (const stop of ["max_tokens", "model_context_window_exceeded"]) {
      const id = await untitledWithExchange(key);
      let calls = 0;
      const cut = {
        messages: {
          create: async () => {
            calls++;
            return {
              id: "msg_cut",
              type: "message",
              role: "assistant",
              model: model.id,
              content: [
                { type: "thinking", thinking: "Let me think about a title for tides", signature: "s" },
                {
                  type: "text",
                  text: "Comparing Tide Tables Across Several Pacific Northwest Harbors and Their Seasonal Var",
                },
              ],
              stop_reason: stop,
              stop_sequence: null,
              usage: { input_tokens: 900, output_tokens: 40 },
            };
          },
        },
      } as unknown as TitleClient;
      const result = await inObject(stubOf(id), async (instance) => {
        const titler = new AutoTitler(instance.scope, instance.record, instance.outbox);
        const first = await titler.afterTurn(cut, model);
        const source = instance.store.titleSource();
        // Tried once, as after a refusal: a later turn does not ask again.
        const again = await titler.afterTurn(cut, model);
        return { first, source, again };
      });
      expect({ stop, ...result, calls }).toEqual({ stop, first: null, source: "auto", again: null, calls: 1 });
      expect(await titleOf(id, key)).toBe(DEFAULT_TITLE);
      const report = await eventually(
        async () => (await api("GET", "/v1/usage", undefined, { key })).json,
        (u) => u.conversations?.some((row) => row.conversationId === id),
      );
      expect(report.conversations.find((r) => r.conversationId === id)).toMatchObject({ titles: 1, input_tokens: 900 });
    }
  });
});
