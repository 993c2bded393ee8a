// Deletion inside workerd: DELETE of a conversation, an attachment, a project file and a project
// removes every R2 object and D1 row it owns and the conversation's Durable Object storage; later
// reads, sockets, tools and redelivered queue jobs find nothing and recreate nothing; a write in
// flight when the delete lands is awaited and swept; another tenant's ids answer like unknown ones.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { attachmentPrefix, conversationPrefix, promptSnapshotPrefix } from "../../r2-layout";
import { runExtractJob } from "../../workers/summarizer/extract";
import { runFoldJob } from "../../workers/summarizer/fold";
import {
  api,
  connectSocket,
  createConversation,
  eventually,
  inConversation,
  newTenant,
  newTenantWithId,
  r2KeysUnder,
  send,
  transcript,
  turnMessages,
} from "./helpers";
import { resultText, toolResults } from "../blocks";
import { shardCount } from "./cortex-rows";
import { leaseJob, stubOf } from "./fold-scripted";
import { holdMessageWrite, swapBinding } from "./object-bindings";
import { routeOf, shardDatabase } from "../../services/cortex/routing";

const jobFor = (id: string, jobId: string) => ({
  kind: "fold" as const,
  jobId,
  tenantId: "dev",
  conversationId: id,
  requestedAt: new Date().toISOString(),
});
const extractJob = (attachmentId: string, fromPage: number, toPage: number) => ({
  kind: "extract" as const,
  tenantId: "dev",
  attachmentId,
  fromPage,
  toPage,
});

const count = async (sql: string, ...params: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...params)
    .first<{ n: number }>())!.n;

/** Every D1 row that names the conversation, by table. */
async function d1RowsOf(conversationId: string) {
  return {
    conversations: await count(`SELECT COUNT(*) AS n FROM conversations WHERE id = ?`, conversationId),
    cortex: await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE conversation_id = ?`, [conversationId]),
    attachments: await count(`SELECT COUNT(*) AS n FROM attachments WHERE conversation_id = ?`, conversationId),
    episodes: await count(`SELECT COUNT(*) AS n FROM memory_episodes WHERE conversation_id = ?`, conversationId),
    tickets: await count(`SELECT COUNT(*) AS n FROM ws_tickets WHERE conversation_id = ?`, conversationId),
  };
}

/** What the object keeps in its own storage: tables with rows, and the alarm. */
async function objectStorage(id: string) {
  return runInDurableObject(stubOf(id), async (_i, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'`,
      )
      .toArray();
    const rows: Record<string, number> = {};
    for (const { name } of tables) {
      const n = state.storage.sql
        .exec<{ n: number }>(
          `SELECT COUNT(*) AS n FROM "${name}"${name === "kv" ? ` WHERE key <> 'schema_version'` : ""}`,
        )
        .one().n;
      if (n) rows[name] = n;
    }
    return { rows, alarm: await state.storage.getAlarm() };
  });
}

async function growUntilLease(id: string): Promise<string> {
  for (let i = 0; i < 40; i++) {
    await send(id, `turn ${i} about zephyr-${i}, the flight plan.\n@reply-chars 1500`);
    const jobId = await leaseJob(id);
    if (jobId) return jobId;
  }
  throw new Error("no fold dispatched");
}

async function makePdf(pages: number, word: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`page ${i} ${word}${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

const upload = <P extends string>(path: P, name: string, body: BodyInit, type: string, key?: string) =>
  api("POST", `${path}?name=${encodeURIComponent(name)}`, body, { key, raw: true, headers: { "content-type": type } });

const search = async (q: string, key?: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, { key })).json.data;

describe("deleting a conversation", () => {
  it("removes its R2 objects, D1 rows and object storage; reads, sockets and redelivered jobs then find nothing", async () => {
    const id = await createConversation({ foldThresholdChars: 5000 });
    // A fold applied (an episode), then a second fold dispatched but not yet run: its job comes late.
    const applied = await runFoldJob(jobFor(id, await growUntilLease(id)), env as Env);
    expect(applied.applied).toBe(true);
    const lateFold = await growUntilLease(id);
    await send(id, "the secret word is obsidian-delete");
    const text = await upload(
      `/v1/conversations/${id}/attachments`,
      "notes.txt",
      "alpha\nbeta obsidian-note\n",
      "text/plain",
    );
    const pdf = await upload(
      `/v1/conversations/${id}/attachments`,
      "book.pdf",
      await makePdf(3, "obsidianpage"),
      "application/pdf",
    );
    expect([text.status, pdf.status]).toEqual([201, 201]);
    expect(await runExtractJob(extractJob(pdf.json.id, 1, 3), env as Env)).toEqual({ pages: 3, indexed: 3 });
    expect((await api("POST", `/v1/conversations/${id}/ws-ticket`)).status).toBe(201);
    await eventually(async () => (await d1RowsOf(id)).episodes > 0 && (await search("obsidian-delete")).length > 0);
    const prefixes = [
      conversationPrefix("dev", id),
      promptSnapshotPrefix("dev", id),
      attachmentPrefix("dev", text.json.id),
      attachmentPrefix("dev", pdf.json.id),
    ];
    for (const p of prefixes) expect((await r2KeysUnder(p)).length, p).toBeGreaterThan(0);
    const before = await d1RowsOf(id);
    for (const [table, n] of Object.entries(before)) expect(n, table).toBeGreaterThan(0);
    const socket = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const closed = new Promise<number>((resolve) => socket.ws!.addEventListener("close", (e) => resolve(e.code)));

    const del = await api("DELETE", `/v1/conversations/${id}`);
    expect(del.status).toBe(204);
    expect(await closed).toBe(4404);

    for (const p of prefixes) expect(await r2KeysUnder(p), p).toEqual([]);
    expect(await d1RowsOf(id)).toEqual({ conversations: 0, cortex: 0, attachments: 0, episodes: 0, tickets: 0 });
    expect(await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE ref_id LIKE ?`, [`${pdf.json.id}:%`])).toBe(0);
    expect(await objectStorage(id)).toEqual({ rows: {}, alarm: null });
    for (const q of ["obsidian-delete", "obsidian-note", "obsidianpage2", "zephyr-3"])
      expect(await search(q), q).toEqual([]);

    // Every route answers exactly as for a conversation that never existed.
    const ghost = await createConversation();
    expect((await api("DELETE", `/v1/conversations/${ghost}`)).status).toBe(204);
    for (const [method, path] of [
      ["GET", ""],
      ["GET", "/messages"],
      ["POST", "/messages"],
      ["GET", "/replay"],
      ["POST", "/ws-ticket"],
      ["GET", "/attachments"],
      ["DELETE", ""],
      ["PATCH", ""],
    ] as const) {
      const body =
        method === "POST" && path === "/messages"
          ? { content: "hello?" }
          : method === "PATCH"
            ? { title: "back" }
            : undefined;
      const r = await api(method, `/v1/conversations/${id}${path}`, body);
      const g = await api(method, `/v1/conversations/${ghost}${path}`, body);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.text.split(id).join("<id>"), `${method} ${path}`).toBe(g.text.split(ghost).join("<id>"));
    }
    expect((await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" })).status).toBe(
      404,
    );
    expect((await api("GET", "/v1/conversations?limit=100")).json.data.map((c) => c.id)).not.toContain(id);

    // Jobs queued before the delete and delivered after it are no-ops that recreate nothing.
    expect(await runFoldJob(jobFor(id, lateFold), env as Env)).toMatchObject({ applied: false });
    expect(await runExtractJob(extractJob(pdf.json.id, 1, 3), env as Env)).toEqual({ pages: 0, indexed: 0 });
    for (const p of prefixes) expect(await r2KeysUnder(p), p).toEqual([]);
    expect(await d1RowsOf(id)).toEqual({ conversations: 0, cortex: 0, attachments: 0, episodes: 0, tickets: 0 });
    expect(await objectStorage(id)).toEqual({ rows: {}, alarm: null });
  }, 120_000);

  it("awaits a batch write in flight, refuses the turn's later writes, and leaves nothing behind", async () => {
    const id = await createConversation();
    await send(id, "first turn");
    // Holds the next message-batch write of this object until released.
    const { atPut, release } = await holdMessageWrite(id, () => true);
    const turn = send(
      id,
      '@tool memory_search {"query":"x"}\n@tool memory_search {"query":"y"}\nsecond turn basalt-inflight',
    );
    await atPut;
    const deleting = api("DELETE", `/v1/conversations/${id}`);
    // The delete must be waiting on the write, not racing past it.
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect((await deleting).status).toBe(204);
    const t = await turn;
    expect(t.status).toBe(404);
    expect(t.json.error?.type).toBe("not_found");
    expect(await r2KeysUnder(conversationPrefix("dev", id))).toEqual([]);
    expect(await r2KeysUnder(promptSnapshotPrefix("dev", id))).toEqual([]);
    expect(await d1RowsOf(id)).toEqual({ conversations: 0, cortex: 0, attachments: 0, episodes: 0, tickets: 0 });
    expect(await objectStorage(id)).toEqual({ rows: {}, alarm: null });
    expect(await search("basalt-inflight")).toEqual([]);
  });

  it("ends a turn queued behind a running one with error and turn_end when the delete lands", async () => {
    const id = await createConversation();
    const sse = { headers: { accept: "text/event-stream" } };
    const running = api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "slow\n@reply-chars 400\n@stream-pace 200" },
      sse,
    );
    await new Promise((r) => setTimeout(r, 300));
    const queued = api("POST", `/v1/conversations/${id}/messages`, { content: "queued behind it" }, sse);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(204);
    const types = (text: string) => [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    // Both streams end with error, then turn_end: a client never waits on a turn that stopped.
    expect(types((await running).text).slice(-2)).toEqual(["error", "turn_end"]);
    const behind = types((await queued).text);
    expect(behind).toContain("turn_queued");
    expect(behind.slice(-2)).toEqual(["error", "turn_end"]);
  });

  it("stops the running turn's model call when the delete lands, instead of letting it stream on", async () => {
    const id = await createConversation();
    const held = api("POST", `/v1/conversations/${id}/messages`, {
      content: "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200",
    });
    await eventually(async () => (await transcript(id)).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(204);
    // The held stream would hold for minutes: the turn ends once the delete aborts it.
    const ended = await Promise.race([held, new Promise((r) => setTimeout(() => r("still running"), 10_000))]);
    expect(ended).not.toBe("still running");
  });

  it("finishes a delete cut short: the tombstone hides it at once, and the alarm (or a second DELETE) completes the purge", async () => {
    for (const finish of ["alarm", "delete"] as const) {
      const id = await createConversation();
      await send(id, "to be deleted granite-crash");
      await eventually(async () => (await search("granite-crash")).length > 0);
      // The purge fails on its first D1 call: the tombstone is written, the rest is not done.
      await swapBinding(id, "DB", (db: D1Database) => {
        let failed = false;
        return new Proxy(db, {
          get(target, prop) {
            const value = Reflect.get(target, prop);
            if (prop === "prepare" && !failed) {
              failed = true;
              return () => {
                throw new Error("injected: D1 down");
              };
            }
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
      });
      expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(500);
      expect((await api("GET", `/v1/conversations/${id}`)).status).toBe(404);
      // Search does not go through the object: its rows went first, so it answers as the others do.
      expect(await search("granite-crash")).toEqual([]);
      expect((await r2KeysUnder(conversationPrefix("dev", id))).length).toBeGreaterThan(0);
      expect((await objectStorage(id)).alarm).not.toBeNull();
      if (finish === "alarm") expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
      else expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(204);
      expect(await r2KeysUnder(conversationPrefix("dev", id))).toEqual([]);
      expect(await d1RowsOf(id)).toEqual({ conversations: 0, cortex: 0, attachments: 0, episodes: 0, tickets: 0 });
      expect(await objectStorage(id)).toEqual({ rows: {}, alarm: null });
      expect((await api("DELETE", `/v1/conversations/${id}`)).status).toBe(404);
    }
  });

  it("keeps in the usage ledger what a deleted conversation spent: rows its outbox still held, and a turn the delete cut short", async () => {
    const usageOf = async (key: string) => (await api("GET", "/v1/usage", undefined, { key })).json.total;
    // A turn part's usage row still waits in the outbox (its D1 write not run yet) when the DELETE lands.
    {
      const { tenantId, key } = await newTenantWithId();
      const id = await createConversation(undefined, key);
      await inConversation(id, async (instance) =>
        instance.outbox.meter("turn_waiting", {
          tenantId,
          conversationId: id,
          model: "claude-sonnet-5-5",
          usage: { input_tokens: 120, output_tokens: 34, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        }),
      );
      expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
      expect(await objectStorage(id)).toEqual({ rows: {}, alarm: null });
      expect(await usageOf(key)).toMatchObject({ turns: 1, input_tokens: 120, output_tokens: 34 });
    }
    // A turn whose model calls ran when the DELETE landed: its 404 answer, and its calls in the ledger.
    {
      const key = await newTenant();
      const id = await createConversation(undefined, key);
      // A first turn, indexed: the tenant has its cortex shard (the swapped bindings below hide the shard list).
      await send(id, "first turn obsidian-first", key);
      await eventually(async () => (await search("obsidian-first", key)).length > 0);
      // Holds the turn's first message-batch write that holds a tool call: after its first model call.
      const { atPut, release } = await holdMessageWrite(
        id,
        (body) => typeof body === "string" && body.includes('"tool_use"'),
      );
      const turn = send(id, '@tool memory_search {"query":"x"}\nthen an answer', key);
      await atPut;
      const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
      await new Promise((r) => setTimeout(r, 200));
      release();
      expect((await deleting).status).toBe(204);
      expect((await turn).status).toBe(404);
      const total = await eventually(async () => ((await usageOf(key)).turns === 2 ? usageOf(key) : null));
      expect(total).toMatchObject({ turns: 2 });
    }
  });

  it("answers another tenant's DELETE exactly like an unknown id, and deletes nothing", async () => {
    const other = await newTenant();
    const id = await createConversation();
    await send(id, "mine only jasper-tenant");
    const theirs = await createConversation(undefined, other);
    const ghost = await createConversation(undefined, other);
    await api("DELETE", `/v1/conversations/${ghost}`, undefined, { key: other });
    const r = await api("DELETE", `/v1/conversations/${id}`, undefined, { key: other });
    const g = await api("DELETE", `/v1/conversations/${ghost}`, undefined, { key: other });
    expect(r.status).toBe(404);
    expect(r.text.split(id).join("<id>")).toBe(g.text.split(ghost).join("<id>"));
    expect((await api("GET", `/v1/conversations/${id}`)).json.messageCount).toBe(2);
    expect((await r2KeysUnder(conversationPrefix("dev", id))).length).toBeGreaterThan(0);
    expect((await api("GET", `/v1/conversations/${theirs}`, undefined, { key: other })).status).toBe(200);
  });
});

describe("a channel whose conversation was deleted", () => {
  it("rotates to a new conversation on its next message instead of answering 404", async () => {
    const first = await api("POST", "/v1/channels/deleted-inbox/messages", { content: "before" });
    expect(first.status).toBe(200);
    const made = (await api("GET", "/v1/channels/deleted-inbox")).json;
    expect(Date.parse(String(made.createdAt))).toBeLessThanOrEqual(Date.parse(String(made.lastActivityAt)));
    expect((await api("DELETE", `/v1/conversations/${first.json.conversationId}`)).status).toBe(204);
    // Until then the channel names no conversation: its old one answers 404 everywhere else.
    expect((await api("GET", "/v1/channels/deleted-inbox")).json.conversationId).toBeNull();
    const listed = (await api("GET", "/v1/channels?limit=100")).json.data.find((c) => c.name === "deleted-inbox");
    expect(listed?.conversationId).toBeNull();
    const next = await api("POST", "/v1/channels/deleted-inbox/messages", { content: "after" });
    expect(next.status).toBe(200);
    expect(next.json.conversationId).not.toBe(first.json.conversationId);
    expect((await api("GET", "/v1/channels/deleted-inbox")).json.conversationId).toBe(next.json.conversationId);
  });
});

describe("deleting an attachment", () => {
  it("removes its bytes, extracted pages and row; the tools then answer as for an unknown id", async () => {
    const id = await createConversation();
    const pdf = await upload(
      `/v1/conversations/${id}/attachments`,
      "atlas.pdf",
      await makePdf(4, "cobaltpage"),
      "application/pdf",
    );
    const txt = await upload(`/v1/conversations/${id}/attachments`, "keep.txt", "kept line\n", "text/plain");
    await runExtractJob(extractJob(pdf.json.id, 1, 4), env as Env);
    expect(await search("cobaltpage3")).toHaveLength(1);
    const other = await newTenant();
    const theirConv = await createConversation(undefined, other);
    // Another tenant, and another conversation of the same tenant, cannot reach it.
    expect(
      (await api("DELETE", `/v1/conversations/${theirConv}/attachments/${pdf.json.id}`, undefined, { key: other }))
        .status,
    ).toBe(404);
    const sibling = await createConversation();
    expect((await api("DELETE", `/v1/conversations/${sibling}/attachments/${pdf.json.id}`)).status).toBe(404);
    expect((await r2KeysUnder(attachmentPrefix("dev", pdf.json.id))).length).toBeGreaterThan(0);

    expect((await api("DELETE", `/v1/conversations/${id}/attachments/${pdf.json.id}`)).status).toBe(204);
    expect(await r2KeysUnder(attachmentPrefix("dev", pdf.json.id))).toEqual([]);
    expect(await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE ref_id LIKE ?`, [`${pdf.json.id}:%`])).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM attachments WHERE id = ?`, pdf.json.id)).toBe(0);
    expect(await search("cobaltpage3")).toEqual([]);
    expect((await api("GET", `/v1/conversations/${id}/attachments/${pdf.json.id}`)).status).toBe(404);
    expect((await api("DELETE", `/v1/conversations/${id}/attachments/${pdf.json.id}`)).status).toBe(404);
    expect((await api("GET", `/v1/conversations/${id}/attachments`)).json.data.map((a) => a.id)).toEqual([txt.json.id]);
    // A late extraction chunk writes nothing back.
    expect(await runExtractJob(extractJob(pdf.json.id, 1, 4), env as Env)).toEqual({ pages: 0, indexed: 0 });
    expect(await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE ref_id LIKE ?`, [`${pdf.json.id}:%`])).toBe(0);
    const ghost = "att_00000000000000000000000000";
    const tools = ["pdf_info", "pdf_read", "pdf_search"].map(
      (t) =>
        `@tool ${t} ${JSON.stringify({ attachment_id: pdf.json.id, ...(t === "pdf_read" ? { pages: "1" } : t === "pdf_search" ? { query: "cobaltpage" } : {}) })}`,
    );
    const r = await send(id, tools.join("\n"));
    const g = await send(id, tools.map((l) => l.replace(pdf.json.id, ghost)).join("\n"));
    const results = (x: { text: string }) =>
      toolResults(turnMessages(x)).map((b) => ({ ...b, content: resultText(b) }));
    expect(results(r)).toHaveLength(3);
    for (const [i, res] of results(r).entries()) {
      expect(res.is_error).toBe(true);
      expect(res.content.split(pdf.json.id).join("<id>")).toBe(results(g)[i].content.split(ghost).join("<id>"));
    }
  });

  it("catches a page chunk that lands after the delete swept", async () => {
    const id = await createConversation();
    const pdf = await upload(
      `/v1/conversations/${id}/attachments`,
      "late.pdf",
      await makePdf(2, "quartzpage"),
      "application/pdf",
    );
    // The chunk reads the row and the pages; the delete runs before its upsert lands in the shard
    // (the shard's primary session, where every cortex write runs, is held back until then).
    const shard = (await routeOf(env as Env, "dev")).shard;
    const real = shardDatabase(env, shard);
    let deleted = false;
    const racingDb = new Proxy(real, {
      get(target, prop) {
        if (prop === "withSession")
          return (start?: string) => {
            const session = target.withSession(start);
            if (start !== "first-primary") return session;
            return new Proxy(session, {
              get(inner, p) {
                if (p === "batch" && !deleted)
                  return async (statements: D1PreparedStatement[]) => {
                    deleted = true;
                    expect((await api("DELETE", `/v1/conversations/${id}/attachments/${pdf.json.id}`)).status).toBe(
                      204,
                    );
                    return inner.batch(statements);
                  };
                const value = Reflect.get(inner, p);
                return typeof value === "function" ? value.bind(inner) : value;
              },
            });
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    expect(await runExtractJob(extractJob(pdf.json.id, 1, 2), { ...(env as Env), [shard]: racingDb })).toEqual({
      pages: 0,
      indexed: 0,
    });
    expect(deleted).toBe(true);
    expect(await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE ref_id LIKE ?`, [`${pdf.json.id}:%`])).toBe(0);
  });
});

describe("deleting a project", () => {
  it("removes one file, then the project and its files; its conversations stay, detached", async () => {
    const proj = (await api("POST", "/v1/projects", { name: "doomed" })).json.id;
    const keep = await upload(`/v1/projects/${proj}/files`, "spec.txt", "spec line onyx-spec\n", "text/plain");
    const drop = await upload(`/v1/projects/${proj}/files`, "old.txt", "old line\n", "text/plain");
    const conv = (await api("POST", "/v1/conversations", { title: "in project", projectId: proj })).json.id;
    expect((await api("GET", `/v1/conversations/${conv}/replay`)).text).toContain("old.txt");
    const other = await newTenant();
    const theirProj = (await api("POST", "/v1/projects", { name: "theirs" }, { key: other })).json.id;
    expect(
      (await api("DELETE", `/v1/projects/${theirProj}/files/${drop.json.id}`, undefined, { key: other })).status,
    ).toBe(404);
    expect((await api("DELETE", `/v1/projects/${proj}`, undefined, { key: other })).status).toBe(404);

    expect((await api("DELETE", `/v1/projects/${proj}/files/${drop.json.id}`)).status).toBe(204);
    expect(await r2KeysUnder(attachmentPrefix("dev", drop.json.id))).toEqual([]);
    expect((await api("GET", `/v1/projects/${proj}`)).json.files.map((f) => f.id)).toEqual([keep.json.id]);
    expect((await api("GET", `/v1/conversations/${conv}/replay`)).text).not.toContain("old.txt");

    expect((await api("DELETE", `/v1/projects/${proj}`)).status).toBe(204);
    expect(await r2KeysUnder(attachmentPrefix("dev", keep.json.id))).toEqual([]);
    expect(await count(`SELECT COUNT(*) AS n FROM attachments WHERE project_id = ?`, proj)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM projects WHERE id = ?`, proj)).toBe(0);
    expect((await api("GET", `/v1/projects/${proj}`)).status).toBe(404);
    expect((await api("DELETE", `/v1/projects/${proj}`)).status).toBe(404);
    // The conversation stays; its prompt no longer names the project or its files.
    const replay = await api("GET", `/v1/conversations/${conv}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.text).not.toContain("spec.txt");
    expect((await send(conv, "still here")).status).toBe(200);
    // A file sent to the deleted project is refused and stored nowhere.
    expect((await upload(`/v1/projects/${proj}/files`, "late.txt", "late\n", "text/plain")).status).toBe(404);
  });
});
