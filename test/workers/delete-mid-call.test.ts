// A conversation's DELETE landing in the middle of another call to it. From the moment the delete
// starts the conversation answers like one that never existed (docs/api-notes.md, "Deleting"):
// - a PATCH, an import of exchanges or an upload's note that waits for the turn or the head, or
//   whose write is in flight, answers 404 (never a 500, nor a 502 saying the file is kept), and
//   nothing of it stays;
// - a new conversation's import is listed while its object commits the transcript: a DELETE of it
//   then is a 204 that cuts the commit short (the import answers 404 and leaves nothing), never a
//   404 it survives; a read meanwhile waits for the commit and sees it whole.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { conversationPrefix, tenantPrefix } from "../../r2-layout";
import { upload } from "./attachment-helpers";
import { shardCount } from "./cortex-rows";
import { type ApiResult, api, eventually, inConversation, newTenantWithId, r2KeysUnder, transcript } from "./helpers";
import { holdMessageWrite, swapBinding } from "./object-bindings";

/** The parts of the live object these tests reach: its turn order and its delete. */
type Internals = {
  order: { inOrder<T>(run: () => Promise<T>): Promise<T> };
  deletion: { deleted: boolean };
};
const internals = (instance: unknown) => instance as Internals;

/** `queued` resolves when the object next queues work behind its turns (an import's or a note's `inOrder`). */
async function nextQueued(id: string): Promise<{ queued: Promise<void> }> {
  let queued!: () => void;
  const at = new Promise<void>((r) => (queued = r));
  await inConversation(id, (instance) => {
    const order = internals(instance).order;
    const inOrder = order.inOrder.bind(order);
    order.inOrder = (run) => {
      queued();
      return inOrder(run);
    };
  });
  return { queued: at };
}

/** Waits until the object has its tombstone: the delete has begun. */
const deleteBegun = (id: string) =>
  eventually(() => inConversation(id, (instance) => internals(instance).deletion.deleted));

/** Gives the object its own bindings back (a test wrapped one). */
const ownBindings = (id: string) =>
  inConversation(id, (instance) => {
    Object.defineProperty(instance, "env", {
      value: Object.getPrototypeOf(instance.env),
      configurable: true,
      writable: true,
    });
  });

/** A turn whose reply holds its stream open (until the delete stops it): later work queues behind it. */
async function holdTurn(id: string, key: string) {
  const before = (await transcript(id, key)).length;
  const turn = api(
    "POST",
    `/v1/conversations/${id}/messages`,
    { content: "Tell me about rivers.\n@reply-chars 1500\n@hold-stream after=200" },
    { key },
  );
  await eventually(async () => (await transcript(id, key)).length === before + 1);
  // In an object: an async function's answer would wait for the turn itself.
  return { turn };
}

const newConversation = async (key: string) => {
  const r = await api("POST", "/v1/conversations", { title: "mid-call" }, { key });
  expect(r.status, r.text).toBe(201);
  return r.json.id;
};

const NOT_FOUND = { error: { type: "not_found", message: "conversation not found" } };

const attachmentRows = async (conversationId: string) =>
  (await env.DB.prepare(`SELECT id FROM attachments WHERE conversation_id = ?`).bind(conversationId).all()).results;

const HEAD = (key: string) => key.endsWith("/head.json");
const STAGED = (key: string) => key.includes("/imports/");

/** `bucket` whose first `method` call on a key `key` matches waits for `gate` (`reached` says so). */
function heldBucket(
  bucket: R2Bucket,
  hold: { method: "get" | "put"; key: (key: string) => boolean; reached: () => void; gate: Promise<void> },
): R2Bucket {
  let held = false;
  return new Proxy(bucket, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop !== hold.method) return value.bind(target);
      return async (key: string, ...rest: unknown[]) => {
        if (!held && hold.key(key)) {
          held = true;
          hold.reached();
          await hold.gate;
        }
        return value.apply(target, [key, ...rest]);
      };
    },
  });
}

describe("a DELETE landing while a call waits for or writes the conversation", () => {
  it("an import of exchanges queued behind a turn answers 404, not 500", async () => {
    const { key } = await newTenantWithId();
    const id = await newConversation(key);
    const { turn } = await holdTurn(id, key);
    const { queued } = await nextQueued(id);
    const imported = api(
      "POST",
      `/v1/conversations/${id}/import`,
      {
        messages: [
          { role: "user", text: "imported q" },
          { role: "assistant", text: "imported a" },
        ],
      },
      { key },
    );
    await queued;
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    const answer = await imported;
    expect(answer.status, answer.text).toBe(404);
    expect(answer.json).toEqual(NOT_FOUND);
    await turn;
  });

  for (const first of [true, false]) {
    it(`an upload whose note waits behind a turn answers 404 and leaves no file (${first ? "its first: tools to activate" : "tools already active"})`, async () => {
      const { tenantId, key } = await newTenantWithId();
      const id = await newConversation(key);
      if (!first) expect((await upload(id, "a.txt", "one\n", "text/plain", key)).status).toBe(201);
      const { turn } = await holdTurn(id, key);
      const { queued } = await nextQueued(id);
      const uploading = upload(id, "b.txt", "hello,world\n1,2\n", "text/plain", key);
      await queued;
      expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
      const answer = await uploading;
      expect(answer.status, answer.text).toBe(404);
      expect(answer.json).toEqual(NOT_FOUND);
      await turn;
      expect(await attachmentRows(id)).toEqual([]);
      await eventually(async () => (await r2KeysUnder(`${tenantPrefix(tenantId)}attachments/`)).length === 0);
    });
  }

  it("an upload whose note batch is being written answers 404, not a 502 saying the file is kept", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await newConversation(key);
    expect((await upload(id, "a.txt", "one\n", "text/plain", key)).status).toBe(201);
    const { atPut, release } = await holdMessageWrite(id, (body) => String(body).includes("b.txt"));
    const uploading = upload(id, "b.txt", "two\n", "text/plain", key);
    await atPut;
    await ownBindings(id);
    const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
    await deleteBegun(id);
    release();
    const [answer, deleted] = await Promise.all([uploading, deleting]);
    expect(deleted.status).toBe(204);
    expect(answer.status, answer.text).toBe(404);
    expect(answer.json).toEqual(NOT_FOUND);
    expect(await attachmentRows(id)).toEqual([]);
    await eventually(async () => (await r2KeysUnder(`${tenantPrefix(tenantId)}attachments/`)).length === 0);
    expect(await r2KeysUnder(conversationPrefix(tenantId, id))).toEqual([]);
  });

  it("a rename whose head write is in flight, and one queued behind it, both answer 404, not 500", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await newConversation(key);
    let reached!: () => void;
    const atPut = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await swapBinding(id, "BUCKET", (bucket: R2Bucket) =>
      heldBucket(bucket, { method: "put", key: HEAD, reached, gate }),
    );
    const first = api("PATCH", `/v1/conversations/${id}`, { title: "first rename" }, { key });
    await atPut;
    await ownBindings(id);
    const second = api("PATCH", `/v1/conversations/${id}`, { title: "second rename" }, { key });
    await new Promise((r) => setTimeout(r, 100));
    const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
    await deleteBegun(id);
    release();
    const [a, b, deleted] = await Promise.all([first, second, deleting]);
    expect(deleted.status).toBe(204);
    expect([a.status, b.status], `${a.text} ${b.text}`).toEqual([404, 404]);
    expect(a.json).toEqual(NOT_FOUND);
    expect(b.json).toEqual(NOT_FOUND);
    expect(await r2KeysUnder(conversationPrefix(tenantId, id))).toEqual([]);
  });
});

/**
 * The next new-conversation import of `tenantId` with its object's first R2 `method` call on a key
 * `key` matches held until `release`: the object's bucket is wrapped just before the commit begins.
 * `atHold` resolves with the new conversation's id once the call is held.
 */
function holdImportCommit(tenantId: string, hold: { method: "get" | "put"; key: (key: string) => boolean }) {
  const live = env as unknown as { CONVERSATION: DurableObjectNamespace };
  const real = live.CONVERSATION;
  let reachedWith!: (id: string) => void;
  const atHold = new Promise<string>((r) => (reachedWith = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const names = new Map<DurableObjectId, string>();
  const commit = (stub: DurableObjectStub, name: string) =>
    new Proxy(stub, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop);
        if (prop !== "importTranscript" || typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const ref = args[0] as { tenantId: string };
          if (ref.tenantId === tenantId) {
            live.CONVERSATION = real;
            const reached = () => reachedWith(name);
            await swapBinding(name, "BUCKET", (bucket: R2Bucket) => heldBucket(bucket, { ...hold, reached, gate }));
          }
          return Reflect.apply(value, target, args);
        };
      },
    });
  live.CONVERSATION = new Proxy(real, {
    get(target, prop) {
      if (prop === "idFromName")
        return (name: string) => {
          const id = target.idFromName(name);
          names.set(id, name);
          return id;
        };
      if (prop === "get")
        return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => {
          const stub = target.get(id, options);
          const name = names.get(id);
          return name ? commit(stub, name) : stub;
        };
      const value: unknown = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { atHold, release, restore: () => (live.CONVERSATION = real) };
}

const TRANSCRIPT = JSON.stringify({
  messages: [
    { role: "user", content: "hello there" },
    { role: "assistant", content: "hi" },
  ],
});

const importing = (key: string, headers: Record<string, string> = {}) =>
  api("POST", "/v1/conversations/import", TRANSCRIPT, {
    key,
    raw: true,
    headers: { "content-type": "application/json", ...headers },
  });

const listedIds = async (key: string) =>
  ((await api("GET", "/v1/conversations", undefined, { key })).json.data as { id: string }[]).map((c) => c.id);

/** Nothing of the conversation is left: no listing row, no R2 record, no index rows, no staging, no object storage. */
async function nothingLeft(tenantId: string, key: string, id: string) {
  expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
  expect(await listedIds(key)).not.toContain(id);
  expect(await r2KeysUnder(conversationPrefix(tenantId, id))).toEqual([]);
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM conversations WHERE id = ?`)
    .bind(id)
    .first<{ n: number }>();
  expect(row?.n).toBe(0);
  expect(await shardCount(`SELECT COUNT(*) AS n FROM cortex_docs WHERE conversation_id = ?`, [id], tenantId)).toBe(0);
  await eventually(async () => (await r2KeysUnder(`${tenantPrefix(tenantId)}imports/`)).length === 0);
  const messages = await inConversation(
    id,
    (_i, state) => state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM messages`).one().n,
  );
  expect(messages).toBe(0);
}

describe("a new conversation's import while its object commits it", () => {
  it("a DELETE while its head is written is a 204 that leaves nothing; the import answers 404", async () => {
    const { tenantId, key } = await newTenantWithId();
    const held = holdImportCommit(tenantId, { method: "put", key: HEAD });
    let id: string;
    let answer: Promise<ApiResult>;
    try {
      answer = importing(key);
      id = await held.atHold;
    } finally {
      held.restore();
    }
    // Listed already (its listing row goes in before the object commits).
    expect(await listedIds(key)).toContain(id);
    // The held write goes on with the wrapper; the purge gets the object's own bindings.
    await ownBindings(id);
    const deleting = api("DELETE", `/v1/conversations/${id}`, undefined, { key });
    await deleteBegun(id);
    held.release();
    expect((await deleting).status).toBe(204);
    const imported = await answer;
    expect(imported.status, imported.text).toBe(404);
    expect(imported.json).toEqual(NOT_FOUND);
    await nothingLeft(tenantId, key, id);
  });

  it("a DELETE while it reads its staged transcript (no write in flight) answers at once; the commit writes nothing", async () => {
    const { tenantId, key } = await newTenantWithId();
    const held = holdImportCommit(tenantId, { method: "get", key: STAGED });
    let id: string;
    let answer: Promise<ApiResult>;
    try {
      answer = importing(key);
      id = await held.atHold;
    } finally {
      held.restore();
    }
    await ownBindings(id);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    held.release();
    const imported = await answer;
    expect(imported.status, imported.text).toBe(404);
    await nothingLeft(tenantId, key, id);
    // A second DELETE finds nothing, as for any conversation deleted.
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(404);
  });

  it("with an Idempotency-Key: the import and its retry are told the conversation was deleted, none is made again", async () => {
    const { tenantId, key } = await newTenantWithId();
    const headers = { "idempotency-key": `k-${crypto.randomUUID()}` };
    const held = holdImportCommit(tenantId, { method: "get", key: STAGED });
    let id: string;
    let answer: Promise<ApiResult>;
    try {
      answer = importing(key, headers);
      id = await held.atHold;
    } finally {
      held.restore();
    }
    await ownBindings(id);
    expect((await api("DELETE", `/v1/conversations/${id}`, undefined, { key })).status).toBe(204);
    held.release();
    const imported = await answer;
    expect(imported.status, imported.text).toBe(404);
    expect(imported.json.error?.message).toContain(`(${id}) was deleted`);
    const retried = await importing(key, headers);
    expect(retried.status, retried.text).toBe(404);
    expect(retried.json.error?.message).toContain(`(${id}) was deleted`);
    await nothingLeft(tenantId, key, id);
    expect(await listedIds(key)).toEqual([]);
  });

  it("a read while it is committed waits for the commit and sees it whole", async () => {
    const { tenantId, key } = await newTenantWithId();
    const held = holdImportCommit(tenantId, { method: "put", key: HEAD });
    let id: string;
    let answer: Promise<ApiResult>;
    try {
      answer = importing(key);
      id = await held.atHold;
    } finally {
      held.restore();
    }
    await ownBindings(id);
    expect(await listedIds(key)).toContain(id);
    let answered = false;
    const reading = api("GET", `/v1/conversations/${id}`, undefined, { key }).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(answered, "a read answers only once the commit is over").toBe(false);
    held.release();
    const read = await reading;
    expect(read.status, read.text).toBe(200);
    expect(read.json).toMatchObject({ id, messageCount: 2 });
    expect((await answer).status).toBe(201);
  });
});
