// GET /v1/usage pages its per-conversation list when asked (the most costly first, `limit` and
// `cursor`): a year of a busy tenant is many thousands of conversations. Without either, the whole
// list, as before. The totals and the per-model list stay whole on every page.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sortableId } from "../../core/ids";
import { recordUsage } from "../../services/usage";
import { api, newTenantWithId } from "./helpers";

const DAY = "2026-03-10";
const range = `from=${DAY}&to=${DAY}`;

/** One ledger row of `cents` cents for `conversationId`. */
const spend = (tenantId: string, conversationId: string, cents: number) =>
  recordUsage(env.DB, {
    tenantId,
    id: `turn_${conversationId}_${cents}`,
    conversationId,
    kind: "turn",
    day: DAY,
    model: "claude-sonnet-4-5",
    usage: {
      input_tokens: 10,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost_usd: cents / 100,
    },
  });

describe("GET /v1/usage pages its conversations", () => {
  it("lists every conversation once, the most costly first, across pages of `limit`", async () => {
    const { key, tenantId } = await newTenantWithId();
    // Two share a cost: the id breaks the tie, on both sides of a page's edge.
    const [a, b, c, d, e] = Array.from({ length: 5 }, () => sortableId("conv")).sort();
    const costs: [string, number][] = [
      [a, 5],
      [b, 9],
      [c, 5],
      [d, 1],
      [e, 7],
    ];
    for (const [id, cents] of costs) await spend(tenantId, id, cents);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
      const res = await api("GET", `/v1/usage?${range}&limit=2${after}`, undefined, { key });
      expect(res.status).toBe(200);
      expect(res.json.conversations.length).toBeLessThanOrEqual(2);
      // Totals and models are whole on every page.
      expect(res.json.total.turns).toBe(5);
      expect(res.json.total.cost_usd).toBeCloseTo(0.27, 6);
      expect(res.json.models).toHaveLength(1);
      seen.push(...res.json.conversations.map((c) => String(c.conversationId)));
      cursor = typeof res.json.next === "string" ? res.json.next : null;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([b, e, a, c, d]);
    // Without `limit` or `cursor`, the whole list, as the route always answered.
    const whole = await api("GET", `/v1/usage?${range}`, undefined, { key });
    expect(whole.json.conversations.map((c) => String(c.conversationId))).toEqual([b, e, a, c, d]);
    expect(whole.json.next).toBeNull();
  });

  it("answers the whole list with `next: null` when it fits the default page", async () => {
    const { key, tenantId } = await newTenantWithId();
    const only = sortableId("conv");
    await spend(tenantId, only, 3);
    const res = await api("GET", `/v1/usage?${range}`, undefined, { key });
    expect(res.status).toBe(200);
    expect(res.json.conversations.map((c) => c.conversationId)).toEqual([only]);
    expect(res.json.next).toBeNull();
  });

  it("refuses a cursor or limit it did not give, naming the parameter", async () => {
    const { key } = await newTenantWithId();
    for (const bad of [
      "cursor=abc",
      "cursor=12.notconv",
      "cursor=-1.conv_01ARZ3NDEKTSV4RRFFQ69G5FAV",
      "limit=0",
      "limit=1001",
    ]) {
      const res = await api("GET", `/v1/usage?${range}&${bad}`, undefined, { key });
      expect(res.status, bad).toBe(400);
      expect(res.json.error?.message, bad).toMatch(bad.split("=")[0]);
    }
  });
});
