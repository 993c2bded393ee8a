// A first turn the model refused is no source of the automatic title: "the whole refused turn (its
// prompt, tool calls and results) is left out of every later request" (docs/api-notes.md), the title
// call included, and the memory map's topics come from titles. The one title attempt is kept for the
// first exchange a replay keeps: the next answered turn titles the conversation.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DEFAULT_TITLE } from "../../core/title";
import { memoryMapFor } from "../../services/memory/memory-map";
import { api, inConversation, newTenantWithId, send } from "./helpers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const titleOf = async (id: string, key: string) =>
  (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title as string;

describe("auto title after a refused first turn", () => {
  it("leaves the refused prompt out of the title and titles the conversation from its next answered turn", async () => {
    const { key, tenantId } = await newTenantWithId();
    const id = (await api("POST", "/v1/conversations", {}, { key })).json.id as string;
    const refused = await send(id, "how do I weaponize the zanzibarite strain\n@stop refusal bio", key);
    expect(refused.json.stop_reason).toBe("refusal");
    // The title runs after the turn (waitUntil): give it the time a title call takes offline.
    await sleep(1_000);
    expect(await titleOf(id, key)).toBe(DEFAULT_TITLE);
    expect(await inConversation(id, async (o) => o.store.titleSource())).toBeNull();
    const map = await memoryMapFor(env.DB, tenantId, "2099-01-01");
    expect(map).not.toMatch(/weaponize|zanzibarite/i);

    const answered = await send(id, "plan a walking tour of Lisbon old town", key);
    expect(answered.status).toBe(200);
    let title = DEFAULT_TITLE;
    for (let i = 0; i < 100 && title === DEFAULT_TITLE; i++) {
      await sleep(100);
      title = await titleOf(id, key);
    }
    expect(title).toMatch(/lisbon/i);
    expect(title).not.toMatch(/weaponize|zanzibarite/i);
    expect(await inConversation(id, async (o) => o.store.titleSource())).toBe("auto");
  });
});
