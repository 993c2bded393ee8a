// POST /v1/conversations/import inside workerd: a conversation from a transcript, streamed and
// staged in R2, checked before anything is visible, indexed, and folded one threshold at a time.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { stageTranscript } from "../../services/transfer/import-staging";
import { api, eventually, newTenant, send, transcript, inConversation, r2KeysUnder } from "./helpers";
import type { Settings } from "../../core/settings";

const exchange = (i: number, chars = 40) => [
  { role: "user", content: `question ${i} about topic-${i} ${"q".repeat(chars)}` },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: `call_${i}`, name: "memory_search", input: { query: `topic-${i}` } }],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: `call_${i}`, content: `result ${i}` }] },
  { role: "assistant", content: [{ type: "text", text: `answer ${i} ${"a".repeat(chars)}` }] },
];
const transcriptOf = (exchanges: number, chars?: number) =>
  Array.from({ length: exchanges }, (_, i) => exchange(i, chars)).flat();

const importJson = <Q extends string = "">(body: unknown, key?: string, qs: Q = "" as Q) =>
  api("POST", `/v1/conversations/import${qs}`, typeof body === "string" ? body : JSON.stringify(body), {
    key,
    raw: true,
    headers: { "content-type": "application/json" },
  });

const tenantObjects = (tenantId: string) => r2KeysUnder(`tenants/${tenantId}/`);
const tenantOf = async (key: string) =>
  (await env.DB.prepare(`SELECT tenant_id AS t FROM api_keys WHERE key_hash = ?`)
    .bind(await sha(key))
    .first<{ t: string }>())!.t;
const sha = async (s: string) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");

describe("transcript import", () => {
  it("creates a conversation from Anthropic Messages JSON, verbatim, indexed, and a turn continues it", async () => {
    const key = await newTenant();
    const messages = transcriptOf(2);
    const r = await importJson({ model: "claude", max_tokens: 100, messages }, key, "?title=From%20elsewhere");
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ title: "From elsewhere", messageCount: 8 });
    const stored = await transcript(r.json.id, key);
    expect(stored.map((m) => ({ role: m.role, content: m.content }))).toEqual(
      messages.map((m) => ({
        role: m.role,
        content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
      })),
    );
    expect(stored.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const hit = await eventually(async () =>
      (await api("GET", "/v1/search?q=topic-1", undefined, { key })).json.data.find(
        (h) => h.conversationId === r.json.id,
      ),
    );
    expect(hit).toBeTruthy();
    const listed = await eventually(async () =>
      (await api("GET", "/v1/conversations", undefined, { key })).json.data.find(
        (c) => c.id === r.json.id && c.messageCount === 8,
      ),
    );
    expect(listed.title).toBe("From elsewhere");
    const turn = await send(r.json.id, "and now live", key);
    expect(turn.status).toBe(200);
    expect(turn.json.messages[0].seq).toBe(9);
    // Nobody else sees it.
    expect((await api("GET", `/v1/conversations/${r.json.id}`, undefined, { key: await newTenant() })).status).toBe(
      404,
    );
  });

  it("imports its own export of a turn paused on a client tool, and of one cut off mid-step; the next turns run", async () => {
    const key = await newTenant();
    const weather = {
      name: "get_weather",
      description: "The weather in a city",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    };
    const created = await api("POST", "/v1/conversations", {}, { key });
    const id = created.json.id;
    const paused = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: '@tool get_weather {"city":"Kyiv"}', tools: [weather] },
      { key },
    );
    expect(paused.json.stop_reason).toBe("requires_action");
    const exported = await api("GET", `/v1/conversations/${id}/export?format=json`, undefined, { key });
    const imported = await importJson(exported.text, key);
    expect(imported.status, imported.text).toBe(201);
    const next = await api("POST", `/v1/conversations/${imported.json.id}/messages`, { content: "go on" }, { key });
    expect(next.status, next.text).toBe(200);
    // Cut off mid-step: the call's result was never saved, and a prompt came after it.
    const cut = await importJson(
      {
        messages: [
          ...transcriptOf(1).slice(0, 2),
          { role: "user", content: "are you there?" },
          { role: "assistant", content: "yes" },
        ],
      },
      key,
    );
    expect(cut.status, cut.text).toBe(201);
    expect((await api("POST", `/v1/conversations/${cut.json.id}/messages`, { content: "again" }, { key })).status).toBe(
      200,
    );
    // A user message with text before its tool_result would fail every later turn: refused.
    const misplaced = await importJson(
      {
        messages: [
          ...transcriptOf(1).slice(0, 2),
          {
            role: "user",
            content: [
              { type: "text", text: "hm" },
              { type: "tool_result", tool_use_id: "call_0", content: "r" },
            ],
          },
          { role: "assistant", content: "done" },
        ],
      },
      key,
    );
    expect(misplaced.status).toBe(400);
    expect(misplaced.json.error?.message).toMatch(
      /^messages\[2\]: tool_result blocks must come before any other content/,
    );
  });

  it("reads JSONL line by line, skipping blank and metadata lines", async () => {
    const key = await newTenant();
    const messages = transcriptOf(1);
    const body = [
      JSON.stringify({ type: "conversation", title: "x" }),
      ...messages.map((m) => JSON.stringify(m)),
      "",
    ].join("\n");
    const r = await api("POST", "/v1/conversations/import", body, {
      key,
      raw: true,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(r.status, r.text).toBe(201);
    expect((await transcript(r.json.id, key)).length).toBe(4);
  });

  it("refuses a bad transcript naming the first bad message, and stores nothing, even after chunks were staged", async () => {
    const key = await newTenant();
    const tenantId = await tenantOf(key);
    const long = transcriptOf(300); // 1,200 messages: two chunks staged before the bad one
    const misplaced = [
      ...long.slice(0, 1102),
      { role: "user", content: [{ type: "text", text: "first" }, ...(long[1102].content as object[])] },
      ...long.slice(1103),
    ];
    const cases: [string, string, RegExp, number?][] = [
      [
        JSON.stringify({ messages: misplaced }),
        "application/json",
        /messages\[1102\]: tool_result blocks must come before any other content of the message/,
      ],
      [
        JSON.stringify({
          messages: [
            { role: "user", content: "hi" },
            { role: "robot", content: "x" },
          ],
        }),
        "application/json",
        /messages\[1\]\.role/,
      ],
      [
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [}]}',
        "application/json",
        /malformed JSON/,
      ],
      [
        `${JSON.stringify({ role: "user", content: "hi" })}\n{"role": "assistant"`,
        "application/x-ndjson",
        /messages\[1\] \(line 2\): malformed JSON/,
      ],
      [JSON.stringify({ messages: [] }), "application/json", /messages: none/],
      [JSON.stringify({ prompt: "x" }), "application/json", /messages: missing/],
      ["hello", "text/plain", /Content-Type/, 415],
    ];
    for (const [body, type, reason, status] of cases) {
      const r = await api("POST", "/v1/conversations/import", body, {
        key,
        raw: true,
        headers: { "content-type": type },
      });
      expect(r.status, r.text).toBe(status ?? 400);
      expect(r.json.error?.message).toMatch(reason);
    }
    const bad = new Uint8Array([
      ...new TextEncoder().encode('{"messages": [{"role": "user", "content": "'),
      0xff,
      ...new TextEncoder().encode('"}]}'),
    ]);
    const r = await api("POST", "/v1/conversations/import", bad, {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/UTF-8/);
    // Staged chunks are removed with the refusal (the last delete may still be in flight).
    await eventually(async () => (await tenantObjects(tenantId)).length === 0);
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });

  it("leaves nothing behind when the commit fails halfway (a staged chunk gone)", async () => {
    const body = new Blob([JSON.stringify({ messages: transcriptOf(300) })]).stream();
    const staged = await stageTranscript(env.BUCKET, { tenantId: "t-commit-fails", body, format: "json" });
    expect(staged.chunks).toBe(3);
    await env.BUCKET.delete(`tenants/t-commit-fails/imports/${staged.importId}/000000000002.json`);
    const id = "conv_01J00000000000000000000000";
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    const ref = { tenantId: "t-commit-fails", conversationId: id };
    const settings = (
      await api("GET", `/v1/conversations/${(await importJson({ messages: transcriptOf(1) })).json.id}`)
    ).json.settings as Partial<Settings> as Settings;
    // Called inside the object, so the refusal is caught there rather than reported as an RPC failure.
    const outcome = await inConversation(stub, async (instance) =>
      instance.importTranscript(ref, { title: "x", settings }, staged).then(
        () => "committed",
        (e: Error) => e.message,
      ),
    );
    expect(outcome).toMatch(/staged chunk 2 is missing/);
    expect(await stub.getMeta(ref)).toBeNull();
    expect((await env.BUCKET.list({ prefix: `tenants/t-commit-fails/conversations/` })).objects).toEqual([]);
    const rows = await inConversation(
      stub,
      async (_i, st) => st.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM messages").one().n,
    );
    expect(rows).toBe(0);
  });

  it("leaves nothing behind when the head write after the batches fails (its answer lost every time)", async () => {
    const tenantId = "t-head-fails";
    const body = new Blob([JSON.stringify({ messages: transcriptOf(2) })]).stream();
    const staged = await stageTranscript(env.BUCKET, { tenantId, body, format: "json" });
    const id = "conv_01J00000000000000000000001";
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    const ref = { tenantId, conversationId: id };
    const settings = (
      await api("GET", `/v1/conversations/${(await importJson({ messages: transcriptOf(1) })).json.id}`)
    ).json.settings as Partial<Settings> as Settings;
    // Every put of the head lands, and its answer is lost: the import cannot know it was written.
    const bucket = new Proxy(env.BUCKET, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== "put") return typeof value === "function" ? value.bind(target) : value;
        return async (key: string, ...rest: unknown[]) => {
          const out = await (value as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
          if (key.endsWith("/head.json")) throw new Error("injected: answer lost");
          return out;
        };
      },
    });
    const outcome = await inConversation(stub, async (instance) => {
      Object.defineProperty(instance, "env", {
        value: Object.create(env, { BUCKET: { value: bucket } }),
        configurable: true,
      });
      return instance.importTranscript(ref, { title: "x", settings }, staged).then(
        () => "committed",
        (e: Error) => e.message,
      );
    });
    expect(outcome).toMatch(/answer lost/);
    expect(await stub.getMeta(ref)).toBeNull();
    expect((await env.BUCKET.list({ prefix: `tenants/${tenantId}/conversations/` })).objects).toEqual([]);
    const rows = await inConversation(
      stub,
      async (_i, st) => st.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM messages").one().n,
    );
    expect(rows).toBe(0);
  });

  it("imports 5,000 messages in seconds, as several R2 batches", async () => {
    const key = await newTenant();
    const tenantId = await tenantOf(key);
    const body = JSON.stringify({ messages: transcriptOf(1250, 100) });
    const started = Date.now();
    const r = await importJson(body, key);
    const ms = Date.now() - started;
    expect(r.status, r.text).toBe(201);
    console.log(`[import] 5,000 messages (${(body.length / 1e6).toFixed(2)} MB) imported in ${ms} ms`);
    expect(r.json.messageCount).toBe(5000);
    expect(ms).toBeLessThan(20_000);
    const batches = (await tenantObjects(tenantId)).filter((k) => k.includes("/messages/"));
    expect(batches.length).toBe(10);
    const page = await api("GET", `/v1/conversations/${r.json.id}/messages?after=4990&limit=20`, undefined, { key });
    expect(page.json.data.map((m) => m.seq)).toEqual([4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999, 5000]);
  }, 60_000);

  it("folds an imported conversation one threshold at a time, until under the threshold", async () => {
    // Fold jobs carry the tenant; the dev tenant's key is the default one.
    const settings = { foldThresholdChars: 2000, tailMessages: 4, summaryMaxChars: 800 };
    const imported = await importJson({ messages: transcriptOf(40, 100) });
    expect(imported.status, imported.text).toBe(201);
    const id = imported.json.id;
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings })).status).toBe(200);
    // The patch does not dispatch; a fold job is dispatched the way a turn would, then folds run on.
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    await inConversation(stub, async (instance) => instance.fold.maybeDispatch());
    const leaseOf = () =>
      inConversation(
        stub,
        async (_i, state) =>
          state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").toArray()[0]
            ?.value ?? null,
      );
    const boundaries: number[] = [];
    for (let folds = 0; folds < 20; folds++) {
      const lease = await leaseOf();
      if (!lease) break;
      const outcome = await runFoldJob(
        {
          kind: "fold",
          jobId: JSON.parse(lease).jobId,
          tenantId: "dev",
          conversationId: id,
          requestedAt: new Date().toISOString(),
        },
        env,
      );
      expect(outcome.applied, outcome.reason).toBe(true);
      boundaries.push((await api("GET", `/v1/conversations/${id}`)).json.summarizedThroughMessage!);
      // The next fold is dispatched in the background after the commit, if still over the threshold.
      await new Promise((r) => setTimeout(r, 50));
    }
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(meta.foldCount).toBeGreaterThan(3);
    expect(meta.foldableChars).toBeLessThanOrEqual(settings.foldThresholdChars);
    expect(meta.summary!.length).toBeLessThanOrEqual(settings.summaryMaxChars);
    // Each fold took about one threshold (about 7 exchanges of ~280 chars), never the whole region at once.
    for (let i = 1; i < boundaries.length; i++) expect(boundaries[i] - boundaries[i - 1]).toBeLessThanOrEqual(40);
    expect(boundaries[0]).toBeLessThanOrEqual(40);
  }, 60_000);
});
