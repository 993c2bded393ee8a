// Every list route answers one shape, {data, next} (plus its original field name holding the same
// array), paged by ?limit=&cursor=: paging with a small limit returns every item exactly once.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sortableId } from "../../core/ids";
import { recordEpisode } from "../../services/memory/notes";
import { PROMPT_PROJECT_FILES } from "../../services/projects";
import { api, createConversation, newTenant, send, inConversation } from "./helpers";

const N = 5;

/** Follows `next` from the first page to the last, checking the shape of each page. */
/** A page of a list as listBody (workers/chat/paging.ts) writes it: `data` and `next` (the route's former name for `data` is no longer sent). */
type ListPage = { data: Item[]; next: string | number | null; [legacy: string]: unknown };
type Item = { id?: unknown; [key: string]: unknown };

async function pageAll(path: string, key: string, legacy: string | null, limit = 2): Promise<Item[]> {
  const all: Item[] = [];
  let cursor: string | number | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const r: { status: number; json: unknown; text: string } = await api(
      "GET",
      `${path}${sep}limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(String(cursor))}`}`,
      undefined,
      { key },
    );
    expect(r.status, `${path}: ${r.text}`).toBe(200);
    const page = r.json as ListPage;
    expect(Array.isArray(page.data)).toBe(true);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    if (legacy) expect(page, `${path}: the former name of data is gone`).not.toHaveProperty(legacy);
    all.push(...page.data);
    if (page.next === null) return all;
    expect(page.data.length).toBe(limit);
    cursor = page.next;
  }
  throw new Error(`${path}: never reached the last page`);
}

/** Exactly `expected`, each once (order as the route gives it). */
function expectEach(items: Item[], expected: readonly (string | number)[], keyOf: (x: Item) => unknown = (x) => x.id) {
  const keys = items.map(keyOf);
  expect(new Set(keys).size, "no item twice").toBe(keys.length);
  expect([...keys].sort()).toEqual([...expected].sort());
}

const times = <T>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

describe("list paging", () => {
  it("conversations, their messages, timeline cards and prompt snapshots", async () => {
    const key = await newTenant();
    const ids = [];
    for (let i = 0; i < N; i++) ids.push(await createConversation(undefined, key));
    expectEach(await pageAll("/v1/conversations", key, "conversations"), ids);

    const id = ids[0];
    for (let i = 0; i < 3; i++) await send(id, `turn ${i}`, key);
    const messages = await pageAll(`/v1/conversations/${id}/messages`, key, "messages");
    expectEach(messages, [1, 2, 3, 4, 5, 6], (m) => m.seq);
    // `after` still pages as before, and `next` still works as `after`.
    const first = await api("GET", `/v1/conversations/${id}/messages?limit=4`, undefined, { key });
    const rest = await api("GET", `/v1/conversations/${id}/messages?after=${first.json.next}&limit=4`, undefined, {
      key,
    });
    expect([...first.json.data, ...rest.json.data].map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const both = await api("GET", `/v1/conversations/${id}/messages?after=1&cursor=2`, undefined, { key });
    expect(both.status).toBe(400);
    expect(both.json.error?.message).toBe("cursor: give after or cursor, not both");

    await inConversation(id, async (instance) => {
      for (let i = 0; i < N; i++) instance.store.addCard("compaction", { n: i });
    });
    expectEach(
      await pageAll(`/v1/conversations/${id}/timeline`, key, "cards"),
      [0, 1, 2, 3, 4],
      (c) => (c.card as { n: number }).n,
    );

    const snapshots = await pageAll(`/v1/conversations/${id}/prompts`, key, null);
    expect(snapshots.length).toBeGreaterThanOrEqual(3);
    const all = (await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).json;
    expect(all.next).toBeNull();
    expectEach(
      snapshots,
      all.data.map((s) => s.id),
    );
  });

  it("attachments, notes, episodes, projects and channels", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const atts = [];
    for (let i = 0; i < N; i++)
      atts.push(
        (
          await api("POST", `/v1/conversations/${id}/attachments?name=f${i}.txt`, `file ${i}\n`, {
            key,
            raw: true,
            headers: { "content-type": "text/plain" },
          })
        ).json.id,
      );
    expectEach(await pageAll(`/v1/conversations/${id}/attachments`, key, "attachments"), atts);

    const notes = await times(
      N,
      async (i) => (await api("POST", "/v1/memory", { text: `note ${i}` }, { key })).json.id,
    );
    expectEach(await pageAll("/v1/memory", key, "notes"), notes);

    const { tenantForKey } = await import("../../services/keys/auth");
    const tenantId = (await tenantForKey(env as Env, key))!;
    for (let i = 0; i < N; i++)
      await recordEpisode(env, {
        tenantId,
        conversationId: id,
        foldJobId: `fold_${crypto.randomUUID()}`,
        throughSeq: i + 1,
        summary: `episode ${i}`,
        at: new Date().toISOString(),
      });
    const episodes = await pageAll(`/v1/memory/episodes?conversation=${id}`, key, "episodes");
    expectEach(episodes, [1, 2, 3, 4, 5], (e) => e.throughSeq);

    const projects = [];
    for (let i = 0; i < N; i++) projects.push((await api("POST", "/v1/projects", { name: `p${i}` }, { key })).json.id);
    expectEach(await pageAll("/v1/projects", key, "projects"), projects);
    const files = [];
    for (let i = 0; i < N; i++)
      files.push(
        (
          await api("POST", `/v1/projects/${projects[0]}/files?name=spec${i}.txt`, `spec ${i}\n`, {
            key,
            raw: true,
            headers: { "content-type": "text/plain" },
          })
        ).json.id,
      );
    expectEach(await pageAll(`/v1/projects/${projects[0]}/files`, key, "files"), files);

    const names = ["alpha", "beta", "delta", "epsilon", "gamma"];
    for (const name of names)
      expect((await api("POST", `/v1/channels/${name}/messages`, { content: "hi" }, { key })).status).toBe(200);
    expectEach(await pageAll("/v1/channels", key, "channels"), names, (c) => c.name);
  });

  it("a project's files past what the prompt lists: the project route pages them and the prompt says more exist", async () => {
    const key = await newTenant();
    const proj = (await api("POST", "/v1/projects", { name: "big" }, { key })).json.id;
    const first = (
      await api("POST", `/v1/projects/${proj}/files?name=first.txt`, "first\n", {
        key,
        raw: true,
        headers: { "content-type": "text/plain" },
      })
    ).json.id;
    // Copies of the stored row stand in for 200 more uploads of the same file.
    const cols =
      "tenant_id, conversation_id, name, type, size, status, r2_key, upload_id, facts, created_at, updated_at, index_status, index_started_at, project_id";
    const copies = Array.from({ length: PROMPT_PROJECT_FILES }, () => sortableId("att"));
    await env.DB.batch(
      copies.map((copy) =>
        env.DB.prepare(`INSERT INTO attachments (id, ${cols}) SELECT ?, ${cols} FROM attachments WHERE id = ?`).bind(
          copy,
          first,
        ),
      ),
    );
    const project = (await api("GET", `/v1/projects/${proj}`, undefined, { key })).json;
    expect(project.files).toHaveLength(PROMPT_PROJECT_FILES);
    expect(project.filesNext).toBe(project.files[PROMPT_PROJECT_FILES - 1].id);
    expectEach(await pageAll(`/v1/projects/${proj}/files`, key, "files", PROMPT_PROJECT_FILES), [first, ...copies]);

    const conv = (await api("POST", "/v1/conversations", { title: "in big", projectId: proj }, { key })).json.id;
    const system = JSON.stringify(
      (await api("GET", `/v1/conversations/${conv}/replay`, undefined, { key })).json.system,
    );
    expect(system).toContain(`More files than these ${PROMPT_PROJECT_FILES} belong to the project`);
  });

  it("automations and their runs", async () => {
    const key = await newTenant();
    const autos = await times(
      N,
      async (i) =>
        (
          await api(
            "POST",
            "/v1/automations",
            { name: `a${i}`, schedule: "@daily", prompt: "p", channel: "c", paused: true },
            { key },
          )
        ).json.id,
    );
    expectEach(await pageAll("/v1/automations", key, "automations"), autos);

    const { tenantForKey } = await import("../../services/keys/auth");
    const tenantId = (await tenantForKey(env as Env, key))!;
    const runs = [];
    for (let i = 0; i < N; i++) {
      const run = sortableId("run");
      runs.push(run);
      await env.DB.prepare(
        `INSERT INTO automation_runs (id, automation_id, tenant_id, slot, status, queued_at) VALUES (?, ?, ?, ?, 'skipped', ?)`,
      )
        .bind(run, autos[0], tenantId, `2026-01-0${i + 1}T00:00:00.000Z`, new Date().toISOString())
        .run();
    }
    expectEach(await pageAll(`/v1/automations/${autos[0]}/runs`, key, null), runs);
  });

  it("search results, ranked, with a cursor that keeps the query's mode", async () => {
    const key = await newTenant();
    const notes = await times(
      N,
      async (i) => (await api("POST", "/v1/memory", { text: `pangolin ${"scale ".repeat(i)}` }, { key })).json.id,
    );
    const hits = await pageAll(`/v1/search?q=pangolin&kind=memory`, key, "results");
    expectEach(hits, notes);
    // The paged ranking is the one-page ranking.
    const one = (await api("GET", `/v1/search?q=pangolin&kind=memory&limit=10`, undefined, { key })).json.data;
    expect(hits.map((h) => h.id)).toEqual(one.map((h) => h.id));
    // "any term" mode (no note has both words) carries through the cursor.
    const anyTerm = await pageAll(
      `/v1/search?q=${encodeURIComponent("pangolin zebrafish")}&kind=memory`,
      key,
      "results",
    );
    expectEach(anyTerm, notes);
    expect((await api("GET", `/v1/search?q=x&cursor=sideways:2`, undefined, { key })).status).toBe(400);
  });
});
