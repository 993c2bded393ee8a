// Tool discovery: only core schemas ride every request; tool_search finds the others and
// tool_activate adds one to the conversation, remembered across turns and rebuilds.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createConversation, send } from "./helpers";

const replay = async (id: string) => (await api("GET", `/v1/conversations/${id}/replay`)).json;
const names = (r: { tools: { name: string }[] }) => r.tools.map((t) => t.name);

describe("tool discovery", () => {
  it("carries core tools only, lists the rest in the capabilities index, and activates on request", async () => {
    const id = await createConversation();
    const before = await replay(id);
    expect(names(before)).toEqual([
      "conversation_read",
      "memory_get",
      "memory_save",
      "memory_search",
      "tool_activate",
      "tool_search",
    ]);
    expect(before.system[0].text).toMatch(/<capabilities>[\s\S]*conversation_list: [^\n]*\(tool_activate first\)/);

    const early = await send(id, `@tool conversation_list {}`);
    expect(early.json.messages[2].content[0]).toMatchObject({ is_error: true });
    expect(early.json.messages[2].content[0].content).toContain('tool_activate {"name":"conversation_list"}');

    const found = await send(id, `@tool tool_search {"query":"list my conversations"}`);
    expect(found.json.messages[2].content[0].content).toMatch(/conversation_list \(inactive: tool_activate/);

    const r = await send(id, `@tool tool_activate {"name":"conversation_list"}\n@tool conversation_list {"limit":5}`);
    const [activated, listed] = r.json.messages[2].content;
    expect(activated.content).toMatch(/active/);
    expect(listed.is_error).toBeUndefined();
    expect(listed.content).toContain(`${id} "test"`);

    const after = await replay(id);
    expect(names(after)).toEqual([...names(before), "conversation_list"]);
    expect((await api("GET", `/v1/conversations/${id}`)).json.activeTools).toEqual(["conversation_list"]);

    // Remembered through a storage loss: the head in R2 carries it.
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    await runInDurableObject(stub, async (_i, state) => state.storage.deleteAll());
    await evictDurableObject(stub);
    expect(names(await replay(id))).toContain("conversation_list");
  });

  it("refuses unknown tools and keeps the prefix byte-identical across turns and conversations", async () => {
    const a = await createConversation();
    const bad = await send(a, `@tool tool_activate {"name":"rm_rf"}`);
    expect(bad.json.messages[2].content[0]).toMatchObject({ is_error: true });
    const r1 = await replay(a);
    await send(a, "another turn");
    const r2 = await replay(a);
    const b = await createConversation();
    const r3 = await replay(b);
    for (const r of [r2, r3]) {
      expect(JSON.stringify(r.system)).toBe(JSON.stringify(r1.system));
      expect(JSON.stringify(r.tools)).toBe(JSON.stringify(r1.tools));
    }
  });
});
