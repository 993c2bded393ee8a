// A conversation's delete forgets only the stored memory maps that name a word of its title, as a
// rename does: a map that never named it stays, and with it every conversation's cached prompt prefix.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { purgeConversation } from "../../services/conversation-purge";
import { memoryMapFor, utcDay } from "../../services/memory/memory-map";
import { api, eventually, newTenantWithId } from "./helpers";

async function created(key: string, title?: string): Promise<string> {
  const r = await api("POST", "/v1/conversations", title === undefined ? {} : { title }, { key });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

const storedMaps = async (tenantId: string): Promise<{ day: string; body: string }[]> =>
  (
    await env.DB.prepare(`SELECT day, body FROM memory_maps WHERE tenant_id = ? AND day != 'generation' ORDER BY day`)
      .bind(tenantId)
      .all<{ day: string; body: string }>()
  ).results;

describe("a conversation's delete and the tenant's memory maps", () => {
  it("keeps the maps that never named its title, and forgets the ones that do", async () => {
    const { tenantId, key } = await newTenantWithId();
    const named = await created(key, "Marmalade planning");
    await eventually(async () => (await memoryMapFor(env.DB, tenantId, utcDay())).includes("marmalade"));
    const today = await memoryMapFor(env.DB, tenantId, utcDay());
    // Made after the map was stored: their titles are in no stored map. A note saved now would be
    // counted by a map computed afresh.
    const unnamed = await created(key, "Quokkafield trip");
    const untitled = await created(key);
    await api("POST", "/v1/memory", { text: "A note a map computed afresh would count." }, { key });

    expect((await api("DELETE", `/v1/conversations/${unnamed}`, undefined, { key })).status).toBe(204);
    expect((await api("DELETE", `/v1/conversations/${untitled}`, undefined, { key })).status).toBe(204);
    expect(await memoryMapFor(env.DB, tenantId, utcDay())).toBe(today);

    expect((await api("DELETE", `/v1/conversations/${named}`, undefined, { key })).status).toBe(204);
    const after = await memoryMapFor(env.DB, tenantId, utcDay());
    expect(after).not.toContain("marmalade");
    expect(after).toMatch(/- notes: 1,/);
  });

  it("forgets, of two stored maps, only the one naming the deleted title", async () => {
    const { tenantId, key } = await newTenantWithId();
    const yesterday = utcDay(Date.now() - 86_400_000);
    const gone = await created(key, "Zebracorn merger");
    const yesterdays = await memoryMapFor(env.DB, tenantId, yesterday);
    expect(yesterdays).toContain("zebracorn");
    // Renamed: today's map is computed from the new title and never names the old one.
    expect((await api("PATCH", `/v1/conversations/${gone}`, { title: "Groceries list" }, { key })).status).toBe(200);
    await eventually(async () => (await memoryMapFor(env.DB, tenantId, yesterday)) !== yesterdays);
    const other = await created(key, "Zebracorn rumours");
    await eventually(async () => (await memoryMapFor(env.DB, tenantId, utcDay())).includes("zebracorn"));
    const todays = await memoryMapFor(env.DB, tenantId, utcDay());
    const olds = await memoryMapFor(env.DB, tenantId, yesterday);
    expect(olds).not.toContain("zebracorn");
    expect(olds).toContain("groceries");

    // The other conversation's title is in today's map only.
    expect((await api("DELETE", `/v1/conversations/${other}`, undefined, { key })).status).toBe(204);
    const left = await storedMaps(tenantId);
    expect(left.map((m) => m.day)).toEqual([yesterday]);
    expect(left[0].body).toBe(olds);
    expect(todays).toContain("zebracorn");
  });

  it("forgets every stored map when the purge cannot read the title (resumed after its listing row went)", async () => {
    const { tenantId, key } = await newTenantWithId();
    await created(key, "Marmalade planning");
    expect(await memoryMapFor(env.DB, tenantId, utcDay())).toContain("marmalade");
    await purgeConversation(env as Env, { tenantId, conversationId: "conv_listing_row_already_gone" });
    expect(await storedMaps(tenantId)).toEqual([]);
  });

  it("forgets only the maps naming the title a purge cut short kept, when resumed after its listing row went", async () => {
    const { tenantId, key } = await newTenantWithId();
    await created(key, "Marmalade planning");
    expect(await memoryMapFor(env.DB, tenantId, utcDay())).toContain("marmalade");
    // A title that names no topic of the stored map: the map stays.
    await purgeConversation(env as Env, { tenantId, conversationId: "conv_gone_one", title: "Zeppelin rota" });
    expect((await storedMaps(tenantId)).length).toBe(1);
    // The title the map names: it goes.
    await purgeConversation(env as Env, { tenantId, conversationId: "conv_gone_two", title: "Marmalade planning" });
    expect(await storedMaps(tenantId)).toEqual([]);
  });

  it("tells the purge's caller the title it read with the listing row, for its tombstone", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await created(key, "Quince orchard");
    const kept: string[] = [];
    await purgeConversation(env as Env, { tenantId, conversationId: id, keepTitle: (title) => kept.push(title) });
    expect(kept).toEqual(["Quince orchard"]);
    // Resumed after that row went, it reads none and tells nothing.
    await purgeConversation(env as Env, { tenantId, conversationId: id, keepTitle: (title) => kept.push(title) });
    expect(kept).toEqual(["Quince orchard"]);
  });
});
