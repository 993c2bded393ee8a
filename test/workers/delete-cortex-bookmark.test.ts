// Deletes reach the tenant's cortex shard (a conversation's rows, an attachment's or a project
// file's pages, a whole project's files' pages), so they answer `x-cortex-bookmark` as the other
// shard writes do: a client that sends it with its next search reads at least that far and does not
// find what it just deleted.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { app } from "../../workers/chat/app";
import { runExtractJob } from "../../workers/summarizer/extract";
import { api, createConversation, eventually, newTenantWithId, send } from "./helpers";
import { latest, spiedConversation, spyShard } from "./shard-spy";

const HEADER = "x-cortex-bookmark";

/** `<bookmark>@<shard>` taken apart. */
const parts = (value: string) => {
  const at = value.lastIndexOf("@");
  return { bookmark: value.slice(0, at), shard: value.slice(at + 1) };
};

/** Where the shard's primary is now. */
async function primaryBookmark(shard: string): Promise<string> {
  const session = (env as unknown as Record<string, D1Database>)[shard].withSession("first-primary");
  await session.prepare("SELECT 1").first();
  return session.getBookmark()!;
}

/** A search's hits and its answered header, sent with `bookmark` when given. */
async function search(q: string, opts: { key: string; bookmark?: string }) {
  const r = await api("GET", `/v1/search?q=${encodeURIComponent(q)}`, undefined, {
    key: opts.key,
    headers: opts.bookmark ? { [HEADER]: opts.bookmark } : {},
  });
  expect(r.status).toBe(200);
  return { hits: r.json.data, header: r.headers.get(HEADER) };
}

/** Checks the answered header: it names `shard` and a bookmark later than `held`. */
function answeredAfter(res: { headers: Headers }, held: { bookmark: string; shard: string }) {
  const value = res.headers.get(HEADER);
  expect(value).toMatch(new RegExp(`^[0-9a-f]+(-[0-9a-f]+)+@${held.shard}$`));
  const answered = parts(value!).bookmark;
  expect(answered > held.bookmark, `answered ${answered}, held ${held.bookmark}`).toBe(true);
  return value!;
}

async function makePdf(pages: number, word: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++)
    doc.addPage([300, 200]).drawText(`page ${i} ${word}${i}`, { x: 20, y: 100, font, size: 12 });
  return doc.save();
}

describe("x-cortex-bookmark on deletes that reach the shard", () => {
  it("DELETE /v1/conversations/:id answers the bookmark its shard purge reached", async () => {
    const { key, id, spy } = await spiedConversation();
    expect((await send(id, "the vault word is plumquartzite", key)).status).toBe(200);
    const held = await eventually(async () => {
      const found = await search("plumquartzite", { key });
      return found.hits.length ? found.header : null;
    });
    const heldParts = parts(held);

    const from = spy.log.length;
    const deleted = await api("DELETE", `/v1/conversations/${id}`, undefined, { key, headers: { [HEADER]: held } });
    expect(deleted.status).toBe(204);
    const value = answeredAfter(deleted, heldParts);
    const answered = parts(value).bookmark;
    // At or after the purge's own write (the object's, through the spy), and no later than the primary now.
    const purge = latest(spy.written(from));
    expect(purge).not.toBe("");
    expect(answered >= purge, `answered ${answered}, purge wrote ${purge}`).toBe(true);
    expect((await primaryBookmark(heldParts.shard)) >= answered).toBe(true);

    // A search sent with it reads past the purge: the conversation's message is not found.
    expect((await search("plumquartzite", { key, bookmark: value })).hits).toEqual([]);
  });

  it("DELETE of an attachment answers the bookmark its pages' purge reached", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const up = await api(
      "POST",
      `/v1/conversations/${id}/attachments?name=vault.pdf`,
      await makePdf(2, "plumquartzpage"),
      { key, raw: true, headers: { "content-type": "application/pdf" } },
    );
    expect(up.status).toBe(201);
    const attachmentId = up.json.id;
    const job = { kind: "extract" as const, tenantId, attachmentId, fromPage: 1, toPage: 2 };
    expect(await runExtractJob(job, env as Env)).toEqual({ pages: 2, indexed: 2 });
    const held = await eventually(async () => {
      const found = await search("plumquartzpage1", { key });
      return found.hits.some((h) => h.kind === "page") ? found.header : null;
    });
    const heldParts = parts(held);
    const shard = (await routeOf(env as Env, tenantId)).shard;
    expect(heldParts.shard).toBe(shard);

    // The route's shard writes through a spy: the answer is the newest bookmark they reached.
    const spy = spyShard(shardDatabase(env, shard));
    const ctx = createExecutionContext();
    const deleted = await app.fetch(
      new Request(`http://chat.test/v1/conversations/${id}/attachments/${attachmentId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${key}`, [HEADER]: held },
      }),
      { ...(env as Env), [shard]: spy.db },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(deleted.status).toBe(204);
    const value = answeredAfter(deleted, heldParts);
    expect(spy.written().length).toBeGreaterThan(0);
    expect(value).toBe(`${latest(spy.written())}@${shard}`);
    expect((await primaryBookmark(shard)) >= parts(value).bookmark).toBe(true);

    const after = await search("plumquartzpage1", { key, bookmark: value });
    expect(after.hits.filter((h) => h.kind === "page")).toEqual([]);
  });

  it("DELETE of a project file answers the bookmark its pages' purge reached", async () => {
    const { key, shard, projectId, fileId, held } = await projectWithIndexedPdf("plumprojpage");
    const spy = spyShard(shardDatabase(env, shard));
    const deleted = await deleteThrough(
      { ...(env as Env), [shard]: spy.db },
      {
        path: `/v1/projects/${projectId}/files/${fileId}`,
        key,
        held,
      },
    );
    expect(deleted.status).toBe(204);
    const value = answeredAfter(deleted, parts(held));
    expect(spy.written().length).toBeGreaterThan(0);
    expect(value).toBe(`${latest(spy.written())}@${shard}`);
    expect((await primaryBookmark(shard)) >= parts(value).bookmark).toBe(true);

    const after = await search("plumprojpage1", { key, bookmark: value });
    expect(after.hits.filter((h) => h.kind === "page")).toEqual([]);
  });

  it("DELETE /v1/projects/:id answers a bookmark at or after its files' purge", async () => {
    const { key, shard, projectId, held } = await projectWithIndexedPdf("plumwholeproj");
    const spy = spyShard(shardDatabase(env, shard));
    const deleted = await deleteThrough(
      { ...(env as Env), [shard]: spy.db },
      {
        path: `/v1/projects/${projectId}`,
        key,
        held,
      },
    );
    expect(deleted.status).toBe(204);
    const value = answeredAfter(deleted, parts(held));
    // At or after the purge of the file's pages, and no later than the primary now.
    const purge = latest(spy.written());
    expect(purge).not.toBe("");
    expect(parts(value).bookmark >= purge, `answered ${value}, purge wrote ${purge}`).toBe(true);
    expect((await primaryBookmark(shard)) >= parts(value).bookmark).toBe(true);

    const after = await search("plumwholeproj1", { key, bookmark: value });
    expect(after.hits.filter((h) => h.kind === "page")).toEqual([]);
  });
});

/** A project with a two-page PDF whose pages are in the index, and a search's bookmark that finds them. */
async function projectWithIndexedPdf(word: string) {
  const { tenantId, key } = await newTenantWithId();
  const projectId = (await api("POST", "/v1/projects", { name: "vault" }, { key })).json.id as string;
  const up = await api("POST", `/v1/projects/${projectId}/files?name=vault.pdf`, await makePdf(2, word), {
    key,
    raw: true,
    headers: { "content-type": "application/pdf" },
  });
  expect(up.status, up.text).toBe(201);
  const fileId = up.json.id as string;
  const job = { kind: "extract" as const, tenantId, attachmentId: fileId, fromPage: 1, toPage: 2 };
  expect(await runExtractJob(job, env as Env)).toEqual({ pages: 2, indexed: 2 });
  const held = await eventually(async () => {
    const found = await search(`${word}1`, { key });
    return found.hits.some((h) => h.kind === "page") ? found.header : null;
  });
  const shard = (await routeOf(env as Env, tenantId)).shard;
  expect(parts(held).shard).toBe(shard);
  return { key, shard, projectId, fileId, held };
}

/** A DELETE through the chat app on `on`, sent with the bookmark `held`; its background work awaited. */
async function deleteThrough(on: Env, { path, key, held }: { path: string; key: string; held: string }) {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://chat.test${path}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${key}`, [HEADER]: held },
    }),
    on,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}
