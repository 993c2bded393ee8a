// Under thinking "between_tools" an effort change is refused while any reply of the conversation
// ran at another effort, even one whose thinking a moved prefix leaves out of today's requests: a
// prefix can move back (an active tenant tool's edit undone), and that thinking then goes back at
// the new effort, which the API refuses on every turn. The turn after the rollback still runs.
import { describe, expect, inject, it } from "vitest";
import { api, createConversation, inConversation, newTenant } from "./helpers";

const server = inject("httpToolServer");

/** How many thinking blocks the conversation's next request carries (GET /replay). */
async function thinkingCarried(id: string, key: string): Promise<number> {
  const r = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json as {
    messages: { content: { type: string }[] | string }[];
  };
  return r.messages
    .flatMap((m) => (typeof m.content === "string" ? [] : m.content))
    .filter((b) => b.type === "thinking").length;
}

/** The conversation reads its tools again at its next request (they are cached per object). */
const forgetTools = (id: string) =>
  inConversation(id, (i) => (i.cache as unknown as { turnTools: { forget(): void } }).turnTools.forget());

describe("a between_tools effort change and a prefix that moves back", () => {
  it("is refused while the old thinking is left out, so the turn after the rollback runs", async () => {
    const key = await newTenant();
    const tool = await api(
      "POST",
      "/v1/tools",
      {
        kind: "http",
        name: "probe_tool",
        description: "probe v1.",
        inputSchema: { type: "object", properties: { city: { type: "string" } } },
        endpoint: `${server}/echo?key=prefix-back`,
      },
      { key },
    );
    expect(tool.status, tool.text).toBe(201);
    const id = await createConversation({ thinking: "between_tools", effort: "high" }, key);
    const send = (content: string) => api("POST", `/v1/conversations/${id}/messages`, { content }, { key });
    expect((await send(`@tool tool_activate {"name":"probe_tool"}`)).status).toBe(200);
    const first = await send(`read\n@tool conversation_read {"from_seq":1,"to_seq":1}`);
    expect([first.status, first.json.stop_reason], first.text).toEqual([200, "end_turn"]);
    expect(await thinkingCarried(id, key)).toBeGreaterThan(0);

    // The tool's description edited: the request's tools moved, the old thinking is left out.
    expect((await api("PATCH", `/v1/tools/${tool.json.id}`, { description: "probe v2." }, { key })).status).toBe(200);
    await forgetTools(id);
    expect(await thinkingCarried(id, key)).toBe(0);
    const patched = await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } }, { key });
    expect(patched.status).toBe(400);
    expect(patched.json.error?.message).toContain("settings.effort");

    // The edit undone: the old prefix, and its thinking, go back; the effort is still the one it ran at.
    expect((await api("PATCH", `/v1/tools/${tool.json.id}`, { description: "probe v1." }, { key })).status).toBe(200);
    await forgetTools(id);
    expect(await thinkingCarried(id, key)).toBeGreaterThan(0);
    const next = await send(`again\n@tool conversation_read {"from_seq":1,"to_seq":1}`);
    expect([next.status, next.json.stop_reason], next.text).toEqual([200, "end_turn"]);
  });
});
