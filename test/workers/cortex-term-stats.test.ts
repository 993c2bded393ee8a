// The cortex weighs a query word by its rarity among the tenant's documents plus a fixed
// background's (services/cortex/term-stats.ts), not the tenant's history alone and never the other
// tenants sharing its D1 shard: a subject the person comes back to all the time keeps its weight
// in their own searches. The ranking gets there by weighting FTS5's bm25 word by word, which rests
// on two facts checked here inside a real shard (the per-word scores sum to FTS5's own score, and
// the row count read from FTS5's averages record is the shard's); a page of GET /v1/search is then
// checked against that arithmetic, with another tenant's rows beside the tenant's in the shard.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assignShard, routeOf } from "../../services/cortex/routing";
import { fts5RowCount, phraseWeights, tenantPhraseWeights } from "../../services/cortex/term-stats";
import { shardOf } from "./cortex-rows";
import { api, createConversation, eventually, newTenantWithId } from "./helpers";

const note = async (key: string, text: string) =>
  (await api("POST", "/v1/memory", { text }, { key })).json.id as string;

describe("cortex term statistics", () => {
  it("keeps a subject the tenant talks about all the time weighty: rare in chat at large beats common in chat at large", async () => {
    const { key } = await newTenantWithId();
    // Half the tenant's notes are about the ukulele: counted over this shard alone, "ukulele" is the
    // commonest word there and weighs nearly nothing, so the one note saying "time" would rank first.
    for (let i = 0; i < 8; i++) await note(key, `Ukulele practice log ${i}: chords and strumming.`);
    for (let i = 0; i < 6; i++) await note(key, `Groceries list ${i}: rice, beans, coffee.`);
    const strap = await note(key, "Bought a new ukulele strap in the market.");
    const friends = await note(key, "Spent the time with friends at the market.");
    const ranked = await eventually(async () => {
      const r = (
        await api("GET", `/v1/search?q=${encodeURIComponent("ukulele time market")}&kind=memory&limit=20`, undefined, {
          key,
        })
      ).json;
      return r.data.length >= 10 ? r.data.map((h) => h.id) : null;
    });
    // Both hold "market"; the strap note's other word is the rare one in chat at large.
    expect(ranked[0]).toBe(strap);
    expect(ranked.indexOf(friends)).toBeGreaterThan(ranked.indexOf(strap));
    // Every ukulele note outranks the one that only shares "time", the commonest word in chat.
    expect(ranked.indexOf(friends)).toBe(ranked.length - 1);
    // A long question is still one ranking (a query takes up to 32 words, each its own FTS5 scan).
    const long = `${Array.from({ length: 31 }, (_, i) => `topic${i}`).join(" ")} strap`;
    const r = await api("GET", `/v1/search?q=${encodeURIComponent(long)}&kind=memory`, undefined, { key });
    expect(r.status).toBe(200);
    expect(r.json.data[0].id).toBe(strap);
  });

  it("lets a long question's one subject word outweigh its everyday words (squared idf)", async () => {
    // A person's question is a whole turn: a name or a subject once, and many everyday words. With
    // BM25's idf as it is (a log), a turn sharing four everyday words ("need plan next week")
    // outscores the one turn holding the name; weighted by the idf squared, the name decides.
    const { key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const pairs = [
      ["My sister Marisol is visiting in June.", "Sure, I can help you get ready for a visit in June."],
      [
        "I need to plan the next few things for this week, what should I do next?",
        "Here is a plan for the week: next, make a list of things to do.",
      ],
      ["We need to sort out the plans for work this week.", "Okay, the plans for work this week are below."],
      ["Groceries: rice, beans and coffee.", "Noted the groceries."],
    ];
    const imported = await api(
      "POST",
      `/v1/conversations/${id}/import`,
      {
        messages: pairs.flatMap(([user, assistant]) => [
          { role: "user" as const, text: user },
          { role: "assistant" as const, text: assistant },
        ]),
      },
      { key },
    );
    expect(imported.status).toBe(201);
    const marisol = imported.json.messages[0].id;
    const question = "Okay so I need to plan the next few things for this week. What should I do next about Marisol?";
    const ranked = await eventually(async () => {
      const r = (
        await api("GET", `/v1/search?q=${encodeURIComponent(question)}&kind=message&limit=5`, undefined, { key })
      ).json;
      return r.data.length >= 5 ? r.data.map((h) => h.id) : null;
    });
    expect(ranked[0]).toBe(marisol);
    // The everyday words still rank: the turn that shares most of them comes next.
    expect(ranked[1]).toBe(imported.json.messages[2].id);
  });

  it("rests on FTS5's own arithmetic, and scores a page of 100 exactly as weighted per-word bm25s add up", async () => {
    const { tenantId, key } = await newTenantWithId();
    // Past 127 rows FTS5's row count is a two-byte varint.
    const words = ["kettle", "harbour", "lantern", "meadow", "orchard"];
    const ids: string[] = [];
    for (let i = 0; i < 140; i++)
      ids.push(
        await note(key, `Note ${i}: ${words.filter((_, j) => (i >> j) & 1).join(" ")} ${"filler ".repeat(i % 7)}`),
      );
    // Another tenant in the same shard, whose notes hold the same words: FTS5's counts are the
    // shard's, the ranking's idf must stay this tenant's own.
    const other = await newTenantWithId();
    await assignShard(env.DB, other.tenantId, (await routeOf(env as Env, tenantId)).shard);
    for (let i = 0; i < 30; i++) await note(other.key, `Other tenant ${i}: kettle harbour kettle`);
    const db = await shardOf(tenantId);
    const all = async <T>(sql: string, ...params: unknown[]) =>
      (
        await db
          .prepare(sql)
          .bind(...params)
          .all<T>()
      ).results;
    const count = async (sql: string, ...params: unknown[]) => (await all<{ n: number }>(sql, ...params))[0].n;
    await eventually(
      async () => (await count(`SELECT count(*) AS n FROM cortex_docs WHERE tenant_id = ?`, tenantId)) >= 140 || null,
    );
    const asked = ["kettle", "harbour", "meadow"];
    const shardRows = await count(`SELECT count(*) AS n FROM cortex_docs`);
    const tenantRows = await count(`SELECT count(*) AS n FROM cortex_docs WHERE tenant_id = ?`, tenantId);
    expect(shardRows).toBeGreaterThan(tenantRows);
    expect(
      fts5RowCount((await all<{ block: unknown }>(`SELECT block FROM cortex_fts_data WHERE id = 1`))[0].block),
    ).toBe(shardRows);
    const phrases = asked.map((w) => `"${w}"`);
    const scores = (match: string) =>
      all<{ ref: string; s: number; tenant: string; created: string }>(
        `SELECT d.ref_id AS ref, bm25(cortex_fts) AS s, d.tenant_id AS tenant, d.created_at AS created FROM cortex_fts JOIN cortex_docs d ON d.rowid = cortex_fts.rowid WHERE cortex_fts MATCH ?`,
        match,
      );
    const perWordShard = await Promise.all(phrases.map(scores));
    // FTS5's score for the OR query is the sum of the words' own scores.
    const whole = new Map((await scores(phrases.join(" OR "))).map((r) => [r.ref, r.s]));
    const summed = new Map<string, number>();
    for (const hits of perWordShard) for (const r of hits) summed.set(r.ref, (summed.get(r.ref) ?? 0) + r.s);
    expect([...summed.keys()].sort()).toEqual([...whole.keys()].sort());
    for (const [ref, s] of whole) expect(summed.get(ref)).toBeCloseTo(s, 9);
    // The cortex's score: each word's bm25 times its factor, FTS5's (shard) idf swapped for the tenant's blended one.
    const perWord = perWordShard.map((hits) => hits.filter((r) => r.tenant === tenantId));
    const weights = tenantPhraseWeights(
      {
        shardRows,
        shardHits: perWordShard.map((h) => h.length),
        tenantRows,
        tenantHits: perWord.map((h) => h.length),
      },
      asked,
    );
    expect(weights).not.toEqual(phraseWeights(asked, { rows: shardRows, hits: perWordShard.map((h) => h.length) }));
    const blended = new Map<string, number>();
    perWord.forEach((hits, j) => hits.forEach((r) => blended.set(r.ref, (blended.get(r.ref) ?? 0) + weights[j] * r.s)));
    // Equal scores: the newer note first, then the id (the ranking's order).
    const created = new Map(perWord.flat().map((r) => [r.ref, r.created]));
    const newer = (x: string, y: string) =>
      created.get(y)! < created.get(x)! ? -1 : created.get(y)! > created.get(x)! ? 1 : 0;
    const expected = [...blended].sort((x, y) => x[1] - y[1] || newer(x[0], y[0]) || (x[0] < y[0] ? -1 : 1));
    expect(expected.length).toBeGreaterThan(110);
    // A page of 100 (more hits than a statement may bind parameters), then the rest by cursor.
    const page = async (cursor?: string) =>
      (
        await api(
          "GET",
          `/v1/search?q=${encodeURIComponent(asked.join(" "))}&kind=memory&limit=100${cursor ? `&cursor=${cursor}` : ""}`,
          undefined,
          { key },
        )
      ).json;
    const first = await page();
    const rest = await page(String(first.next));
    const got = [...first.data, ...rest.data];
    expect(first.data).toHaveLength(100);
    expect(got.map((h) => h.id)).toEqual(expected.map(([ref]) => ref));
    got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i][1], 9));
    expect(got.every((h) => /\[(kettle|harbour|meadow)\]/.test(String(h.snippet)))).toBe(true);
    expect(new Set(got.map((h) => h.id)).size).toBe(got.length);
    expect(got.every((h) => ids.includes(String(h.id)))).toBe(true);
  });
});
