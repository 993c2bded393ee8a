// GET /v1/conversations?order=activity: most recent activity first (a turn, an import, an
// attachment note or a rename moves a conversation up; a fold or a settings change does not),
// ties by id, paged by an (updatedAt, id) cursor through the conversations_tenant_activity index.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityPageQuery } from "../../services/conversation-list";
import { api, newTenant, send } from "./helpers";

const eventually = async <T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
};

async function create(key: string, title: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", { title }, { key });
  expect(r.status).toBe(201);
  return r.json.id;
}

const ids = async (key: string, query: string) =>
  (await api("GET", `/v1/conversations?${query}`, undefined, { key })).json.data.map((c) => c.id);

/** Every page of `?order=activity` from the first, with `limit`; `between` runs after each page but the last. */
async function pageAll(key: string, limit: number, between?: (page: number) => Promise<void>): Promise<string[]> {
  const all: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const r = await api("GET", `/v1/conversations?order=activity&limit=${limit}${query}`, undefined, { key });
    expect(r.status, r.text).toBe(200);
    expect(r.json).not.toHaveProperty("conversations");
    all.push(...r.json.data.map((c) => c.id));
    if (r.json.next === null) return all;
    cursor = String(r.json.next);
    await between?.(page);
  }
  throw new Error("never reached the last page");
}

describe("conversations by activity", () => {
  it("a turn, an import or a rename moves a conversation to the top; the default order stays newest created first", async () => {
    const key = await newTenant();
    const a = await create(key, "a");
    const b = await create(key, "b");
    const c = await create(key, "c");
    expect(await ids(key, "")).toEqual([c, b, a]);
    expect(await ids(key, "order=created")).toEqual([c, b, a]);
    expect(await ids(key, "order=activity")).toEqual([c, b, a]);

    expect((await send(a, "wake up", key)).status).toBe(200);
    expect(
      await eventually(
        () => ids(key, "order=activity"),
        (v) => v[0] === a,
      ),
    ).toEqual([a, c, b]);
    // The default order does not move.
    expect(await ids(key, "")).toEqual([c, b, a]);

    expect(
      (
        await api(
          "POST",
          `/v1/conversations/${b}/import`,
          {
            messages: [
              { role: "user", text: "q" },
              { role: "assistant", text: "r" },
            ],
          },
          { key },
        )
      ).status,
    ).toBe(201);
    expect(
      await eventually(
        () => ids(key, "order=activity"),
        (v) => v[0] === b,
      ),
    ).toEqual([b, a, c]);

    expect((await api("PATCH", `/v1/conversations/${c}`, { title: "renamed" }, { key })).status).toBe(200);
    const moved = await eventually(
      () => api("GET", "/v1/conversations?order=activity", undefined, { key }),
      (r) => r.json.data[0]?.id === c,
    );
    expect(moved.json.data.map((x) => x.id)).toEqual([c, b, a]);
    // The listing row carries the new title too, without waiting for a turn.
    expect(moved.json.data[0].title).toBe("renamed");

    // A settings change is no activity: the order stays.
    expect((await api("PATCH", `/v1/conversations/${a}`, { settings: { tailMessages: 12 } }, { key })).status).toBe(
      200,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await ids(key, "order=activity")).toEqual([c, b, a]);
  });

  it("ties are broken by id, and paging returns each conversation exactly once", async () => {
    const key = await newTenant();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await create(key, `t${i}`));
    // Three share one updatedAt: they page by id, newest id first, across page boundaries.
    await env.DB.prepare(`UPDATE conversations SET updated_at = '2030-01-01T00:00:00.000Z' WHERE id IN (?, ?, ?)`)
      .bind(made[0], made[2], made[4])
      .run();
    await env.DB.prepare(`UPDATE conversations SET updated_at = '2029-01-01T00:00:00.000Z' WHERE id IN (?, ?)`)
      .bind(made[1], made[3])
      .run();
    expect(await pageAll(key, 2)).toEqual([made[4], made[2], made[0], made[3], made[1]]);
    expect(await pageAll(key, 1)).toEqual([made[4], made[2], made[0], made[3], made[1]]);
  });

  it("a conversation that moves during paging is never listed twice; one not yet reached moves above the cursor", async () => {
    const key = await newTenant();
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push(await create(key, `m${i}`));
    // Activity order: m3 m2 | m1 m0. After the first page, m2 (already seen) and m0 (not yet) get turns.
    const seen = await pageAll(key, 2, async (page) => {
      if (page !== 0) return;
      for (const id of [made[2], made[0]]) expect((await send(id, "moving", key)).status).toBe(200);
      await eventually(
        () => ids(key, "order=activity"),
        (v) => v[0] === made[0] && v[1] === made[2],
      );
    });
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([made[3], made[2], made[1]]);
    // A fresh pass from the first page has it at the top.
    expect(await ids(key, "order=activity")).toEqual([made[0], made[2], made[3], made[1]]);
  });

  it("is tenant-isolated, and a bad order or cursor is a 400 naming it", async () => {
    const key = await newTenant();
    const other = await newTenant();
    const mine = await create(key, "mine");
    await create(other, "theirs");
    expect(await ids(key, "order=activity")).toEqual([mine]);
    const badOrder = await api("GET", "/v1/conversations?order=updated", undefined, { key });
    expect(badOrder.status).toBe(400);
    expect(badOrder.json.error?.message).toMatch(/order/);
    for (const cursor of [
      mine,
      "yesterday~conv_x",
      `2030-01-01T00:00:00.000Z~${mine}'--`,
      // The shape of a time, naming none.
      "2026-13-45T99:99:99Z~conv_x",
      "2026-02-30T10:00:00Z~conv_x",
    ]) {
      const r = await api("GET", `/v1/conversations?order=activity&cursor=${encodeURIComponent(cursor)}`, undefined, {
        key,
      });
      expect(r.status, cursor).toBe(400);
      expect(r.json.error?.message).toMatch(/cursor/);
    }
    // A created-order cursor is still a conversation id, not an activity cursor.
    const r = await api(
      "GET",
      `/v1/conversations?cursor=${encodeURIComponent(`2030-01-01T00:00:00.000Z~${mine}`)}`,
      undefined,
      { key },
    );
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toMatch(/cursor/);
    expect((await api("GET", "/v1/conversations?order=activity", undefined, { key: "" })).status).toBe(401);
  });

  it("reads through the conversations_tenant_activity index: no scan, no sort", async () => {
    for (const after of [undefined, { updatedAt: "2030-01-01T00:00:00.000Z", id: "conv_x" }]) {
      const q = activityPageQuery(env.DB, { tenantId: "tnt_x", limit: 21, after }).toSQL();
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${q.sql}`)
        .bind(...q.params)
        .all<{ detail: string }>();
      const detail = plan.results.map((r) => r.detail).join("\n");
      expect(detail).toMatch(/SEARCH conversations USING INDEX conversations_tenant_activity/);
      expect(detail).not.toMatch(/TEMP B-TREE|SCAN/);
    }
  });
});
