// An export is one consistent moment of its conversation, and what the exporter writes imports
// back as it says: a delete that interrupts an export fails it (cards and attachments included,
// not only messages); a regenerate or a new turn during an export stays out of it; a tenant-wide
// export file (several conversations) is refused by the one-conversation import, naming the line,
// with nothing staged left behind; and the export of a conversation with no messages imports back
// as an empty conversation; a fold that commits while it is written stays out of its fold history.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { conversationPrefix, stagedImportMarkerPrefix, tenantPrefix } from "../../r2-layout";
import { exportText } from "../../services/transfer/export-format";
import { runFoldJob } from "../../workers/summarizer/fold";
import { exportSourceFor } from "../../workers/chat/export-source";
import { leasedFold, scriptedReply } from "./fold-scripted";
import {
  api,
  importText,
  createConversation,
  eventually,
  inConversation,
  newTenantWithId,
  r2KeysUnder,
  send,
  transcript,
} from "./helpers";

const exported = async (id: string, format: "json" | "jsonl", key: string) =>
  (await api("GET", `/v1/conversations/${id}/export?format=${format}`, undefined, { key })).text;
const TYPES = { json: "application/json", jsonl: "application/x-ndjson" } as const;

/**
 * Holds the live object's listing of the conversation's whole R2 prefix: the purge's last step,
 * after the tombstone, the cortex rows and the attachments went. `reached` resolves when it is held
 * (polled from the test's own context: a promise the object resolved would continue the test in the
 * object's, where the test's stubs cannot be used).
 */
async function holdFinalPurgeStep(tenantId: string, conversationId: string) {
  let held = false;
  const reached = eventually(async () => held || null);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const prefix = conversationPrefix(tenantId, conversationId);
  await inConversation(conversationId, (instance) => {
    const bucket = new Proxy(instance.env.BUCKET, {
      get(target, prop) {
        const value = Reflect.get(target, prop);
        if (prop !== "list") return typeof value === "function" ? value.bind(target) : value;
        return async (options?: R2ListOptions) => {
          if (options?.prefix === prefix) {
            held = true;
            await gate;
          }
          return target.list(options);
        };
      },
    });
    Object.defineProperty(instance, "env", {
      value: Object.create(instance.env, { BUCKET: { value: bucket } }),
      configurable: true,
      writable: true,
    });
  });
  return { reached, release };
}

/** A conversation with an attachment and one turn, its delete to be held at its final purge step. */
async function heldDelete() {
  const { key, tenantId } = await newTenantWithId();
  const conv = await createConversation(undefined, key);
  const upload = await api("POST", `/v1/conversations/${conv}/attachments?name=n.txt`, "notes\n", {
    key,
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  expect(upload.status, upload.text).toBe(201);
  expect((await send(conv, "hello", key)).status).toBe(200);
  return { key, tenantId, conv, ...(await holdFinalPurgeStep(tenantId, conv)) };
}

describe("an export during a delete", () => {
  it("fails when the delete took the attachments and cards before they were read, though every message is still there", async () => {
    const { key, tenantId, conv, reached, release } = await heldDelete();
    const source = await exportSourceFor(env, { tenantId, conversationId: conv });
    const deleting = api("DELETE", `/v1/conversations/${conv}`, undefined, { key });
    await reached;
    const lines: string[] = [];
    const written = (async () => {
      for await (const piece of exportText(source!, "jsonl")) lines.push(piece);
    })();
    try {
      await expect(written).rejects.toThrow(/deleted/);
    } finally {
      release();
      expect((await deleting).status).toBe(204);
    }
  });

  it("fails when the delete began after its attachments were read: the tombstone seen at the end fails it", async () => {
    const { key, tenantId, conv, reached, release } = await heldDelete();
    const source = await exportSourceFor(env, { tenantId, conversationId: conv });
    const pieces = exportText(source!, "jsonl");
    for (let piece = await pieces.next(); !piece.done; piece = await pieces.next())
      if (piece.value.startsWith('{"type":"attachment"')) break;
    const deleting = api("DELETE", `/v1/conversations/${conv}`, undefined, { key });
    await reached;
    const rest = (async () => {
      for (let piece = await pieces.next(); !piece.done; piece = await pieces.next());
    })();
    try {
      await expect(rest).rejects.toThrow(/deleted while it was exported/);
    } finally {
      release();
      expect((await deleting).status).toBe(204);
    }
  });
});

describe("an export during a regenerate", () => {
  it("is the conversation as it was when the export began: the later exchange left out, nothing unmarked", async () => {
    const { key, tenantId } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
    const source = await exportSourceFor(env, { tenantId, conversationId: conv });
    expect((await api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true }, { key })).status).toBe(200);
    let text = "";
    for await (const piece of exportText(source!, "json")) text += piece;
    const doc = JSON.parse(text) as {
      conversation: { lastSeq: number };
      messages: { seq: number; superseded?: true }[];
    };
    expect(doc.conversation.lastSeq).toBe(2);
    expect(doc.messages.map((m) => m.seq)).toEqual([1, 2]);
    // Imported, it is that moment's conversation: its reply is current and replayed.
    const imported = await importText(text, key, TYPES.json);
    expect(imported.status, imported.text).toBe(201);
    const copy = await transcript(imported.json.id, key);
    expect(copy.map((m) => m.superseded ?? false)).toEqual([false, false]);
    // The conversation itself moved on: its first reply is now the replaced one.
    expect((await transcript(conv, key)).filter((m) => m.superseded).length).toBe(2);
  });
});

describe("a tenant-wide export file brought to the one-conversation import", () => {
  it("is refused at its second conversation line, naming it, with nothing staged or created", async () => {
    const { key, tenantId } = await newTenantWithId();
    // 600 messages: the first staging chunk (500) is written before the second conversation's line.
    const messages = Array.from({ length: 600 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `message ${i}`,
    }));
    const big = await importText(JSON.stringify({ messages }), key, TYPES.json);
    expect(big.status, big.text).toBe(201);
    const small = await createConversation(undefined, key);
    expect((await send(small, "hello", key)).status).toBe(200);
    const first = await exported(big.json.id, "jsonl", key);
    const file = first + (await exported(small, "jsonl", key));
    const secondLine = first.trimEnd().split("\n").length + 1;
    const listed = async () => (await api("GET", "/v1/conversations?limit=100", undefined, { key })).json;
    const before = JSON.stringify(await listed());
    const r = await importText(file, key, TYPES.jsonl);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error?.type).toBe("invalid_request");
    expect(r.json.error?.message).toBe(
      `line ${secondLine}: a second conversation; an import takes one conversation (this file holds several)`,
    );
    expect(JSON.stringify(await listed())).toBe(before);
    expect(await r2KeysUnder(`${tenantPrefix(tenantId)}imports/`)).toEqual([]);
    expect((await r2KeysUnder(stagedImportMarkerPrefix)).filter((k) => k.endsWith(`/${tenantId}`))).toEqual([]);
  });
});

describe("the export of a conversation with no messages", () => {
  it("imports back as an empty conversation, in JSON and in JSONL", async () => {
    const { key } = await newTenantWithId();
    const empty = (await api("POST", "/v1/conversations", { title: "nothing yet" }, { key })).json.id;
    for (const format of ["json", "jsonl"] as const) {
      const r = await api("POST", "/v1/conversations/import?title=Brought%20back", await exported(empty, format, key), {
        key,
        raw: true,
        headers: { "content-type": TYPES[format] },
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toMatchObject({ title: "Brought back", messageCount: 0, lastSeq: 0 });
      expect(await transcript(r.json.id, key)).toEqual([]);
      // It is a conversation like any other: a turn runs on it.
      expect((await send(r.json.id, "hello", key)).status).toBe(200);
    }
  });

  it("still refuses a bare transcript with no messages, and an append of none", async () => {
    const { key } = await newTenantWithId();
    for (const [body, type] of [
      ['{"messages":[]}', TYPES.json],
      ["[]", TYPES.json],
      ['{"type":"card","card":{}}\n', TYPES.jsonl],
    ] as const) {
      const r = await importText(body, key, type);
      expect(r.status, r.text).toBe(400);
      expect(r.json.error?.message).toBe("messages: none; a transcript needs at least one message");
    }
    const conv = await createConversation(undefined, key);
    const append = await api("POST", `/v1/conversations/${conv}/import`, { messages: [] }, { key });
    expect(append.status).toBe(400);
  });

  it("refuses a JSONL export cut before its messages: its conversation line says it had some", async () => {
    const { key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
    const lines = (await exported(conv, "jsonl", key)).split("\n").filter(Boolean);
    // Metadata lines carry a type of their own; message lines are messages.
    const metadataOnly = `${lines.filter((l) => !["message", undefined].includes(JSON.parse(l).type)).join("\n")}\n`;
    expect(metadataOnly).toContain('"type":"conversation"');
    const r = await importText(metadataOnly, key, TYPES.jsonl);
    expect(r.status, r.text).toBe(400);
    expect(r.json.error?.message).toBe("messages: none; a transcript needs at least one message");
  });
});

/** `db`, whose first statement on the fold history (memory_episodes) runs `before` first. */
function beforeEpisodesRead(db: D1Database, before: () => Promise<void>): D1Database {
  let fired = false;
  const statement = (stmt: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(stmt, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (prop === "bind") return (...a: unknown[]) => statement(target.bind(...a));
        if (!["run", "all", "raw", "first"].includes(String(prop)))
          return (v as (...x: unknown[]) => unknown).bind(target);
        return async (...a: unknown[]) => {
          if (!fired) {
            fired = true;
            await before();
          }
          return (v as (...x: unknown[]) => Promise<unknown>).apply(target, a);
        };
      },
    });
  return new Proxy(db, {
    get(t, prop) {
      if (prop === "prepare")
        return (sql: string) => (/memory_episodes/i.test(sql) ? statement(t.prepare(sql)) : t.prepare(sql));
      const v: unknown = Reflect.get(t, prop);
      return typeof v === "function" ? (v as (...x: unknown[]) => unknown).bind(t) : v;
    },
  });
}

describe("an export during a fold's commit", () => {
  it("lists no fold episode past the summary of the head it read", async () => {
    const job = await leasedFold();
    const id = job.conversationId;
    const commitFold = async () => {
      const { client } = scriptedReply("SUMMARY OF THE EARLY TOPICS.", "end_turn");
      expect((await runFoldJob(job, env, { client })).applied).toBe(true);
      await eventually(async () => {
        const row = await env.DB.prepare("SELECT count(*) AS n FROM memory_episodes WHERE conversation_id = ?")
          .bind(id)
          .first<{ n: number }>();
        return (row?.n ?? 0) > 0 || null;
      });
    };
    const source = await exportSourceFor(
      { ...env, DB: beforeEpisodesRead(env.DB, commitFold) },
      { tenantId: "dev", conversationId: id },
    );
    const conversation = source?.conversation as unknown as {
      summary: string | null;
      summarizedThroughMessage: number | null;
    };
    expect(conversation.summary).toBeNull();
    expect(source?.episodes).toEqual([]);
    // The next export is the moment after the fold: its summary and its episode together.
    const after = await exportSourceFor(env, { tenantId: "dev", conversationId: id });
    if (!after) throw new Error("the conversation is gone");
    const through = (after.conversation as unknown as { summarizedThroughMessage: number }).summarizedThroughMessage;
    expect(after.episodes.map((e) => [e.throughSeq, e.summary])).toEqual([[through, "SUMMARY OF THE EARLY TOPICS."]]);
  });
});
