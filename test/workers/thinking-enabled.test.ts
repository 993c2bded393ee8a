// Manual extended thinking (`thinking: "enabled"` with `thinkingBudgetTokens`) on the models whose
// catalog modes include "enabled" (Claude Haiku 4.5, Opus 4.5, Opus 4.6, Sonnet 4.6): the request
// carries `thinking: {type: "enabled", budget_tokens}` below its max_tokens, a tool loop sends the
// thinking back as the strict offline model requires, and a model without the mode, or a budget out
// of range, is a 400 naming it.
import { describe, expect, it } from "vitest";
import type { ModelRequest, WireMessage } from "../../core/types";
import { DEFAULT_TITLE } from "../../core/title";
import { api, createConversation, eventually, send } from "./helpers";

/** Every request the conversation sent to the model, oldest first. */
async function requestsOf(id: string): Promise<ModelRequest[]> {
  const list = (await api("GET", `/v1/conversations/${id}/prompts?limit=50`)).json.data;
  const all: ModelRequest[] = [];
  for (const p of list.toReversed())
    all.push((await api("GET", `/v1/conversations/${id}/prompts/${p.id}`)).json as unknown as ModelRequest);
  return all;
}

const patch = (id: string, settings: object) => api("PATCH", `/v1/conversations/${id}`, { settings });
const blockTypes = (m: WireMessage) => (typeof m.content === "string" ? ["text"] : m.content.map((b) => b.type));

describe('thinking "enabled" (manual extended thinking)', () => {
  it("on Claude Haiku 4.5 sends the budget below max_tokens and keeps thinking through a tool round trip", async () => {
    const id = await createConversation({
      model: "claude-haiku-4-5",
      thinking: "enabled",
      thinkingBudgetTokens: 4_000,
    });
    const settings = (await api("GET", `/v1/conversations/${id}`)).json.settings;
    expect(settings).toMatchObject({ thinking: "enabled", thinkingBudgetTokens: 4_000 });

    const r = await send(id, 'read the first message\n@tool conversation_read {"from_seq":1,"to_seq":1}');
    expect(r.status, r.text).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const replies = r.json.messages.filter((m) => m.role === "assistant");
    expect(replies.length).toBeGreaterThanOrEqual(2);
    expect(replies[0].content[0].type).toBe("thinking");

    const requests = await requestsOf(id);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) {
      expect(request.thinking).toMatchObject({ type: "enabled", budget_tokens: 4_000 });
      expect(request.max_tokens).toBeGreaterThan(4_000);
    }
    // The call after the tool result carries the reply with its thinking first, signed, as produced.
    const last = requests.at(-1)!;
    const answered = last.messages.findLastIndex((m) => m.role === "assistant");
    expect(blockTypes(last.messages[answered])[0]).toBe("thinking");
    expect(blockTypes(last.messages[answered + 1])).toContain("tool_result");
  });

  it("defaults its budget to 8,000 tokens, within what max_tokens leaves", async () => {
    const id = await createConversation({ model: "claude-haiku-4-5", thinking: "enabled" });
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.thinkingBudgetTokens).toBeNull();
    expect((await api("GET", `/v1/conversations/${id}/replay`)).json.thinking).toMatchObject({
      type: "enabled",
      budget_tokens: 8_000,
    });
    // A small reserve: the default budget shrinks to fit below it.
    expect((await patch(id, { outputReserveTokens: 4_000 })).status).toBe(200);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.max_tokens).toBe(4_000);
    expect(replay.thinking).toMatchObject({ type: "enabled", budget_tokens: 2_000 });
    expect((await send(id, "hello")).status).toBe(200);
  });

  it("is refused on a model whose modes lack it, at create and at PATCH, and leaves with a model change", async () => {
    const created = await api("POST", "/v1/conversations", {
      title: "t",
      settings: { model: "claude-sonnet-5-5", thinking: "enabled" },
    });
    expect(created.status).toBe(400);
    expect(created.json.error?.message).toMatch(/^settings\.thinking: claude-sonnet-5-5 does not take "enabled"/);

    const sonnet = await createConversation({ model: "claude-sonnet-5-5" });
    const refused = await patch(sonnet, { thinking: "enabled" });
    expect(refused.status).toBe(400);
    expect(refused.json.error?.message).toMatch(/^settings\.thinking: claude-sonnet-5-5 does not take "enabled"/);

    const haiku = await createConversation({ model: "claude-haiku-4-5", thinking: "enabled" });
    const named = await patch(haiku, { model: "claude-sonnet-5-5", thinking: "enabled" });
    expect(named.status).toBe(400);
    expect(named.json.error?.message).toMatch(/^settings\.thinking: claude-sonnet-5-5 does not take "enabled"/);
    // Not named: it falls back to the new model's default, as another mode it does not take would.
    expect((await patch(haiku, { model: "claude-sonnet-5-5" })).status).toBe(200);
    expect((await api("GET", `/v1/conversations/${haiku}`)).json.settings.thinking).toBe("auto");
  });

  it("refuses a budget below 1,024 or not below the request's max_tokens", async () => {
    const low = await api("POST", "/v1/conversations", {
      title: "t",
      settings: { model: "claude-haiku-4-5", thinking: "enabled", thinkingBudgetTokens: 1_000 },
    });
    expect(low.status).toBe(400);
    expect(low.json.error?.message).toMatch(/thinkingBudgetTokens/);

    const high = await api("POST", "/v1/conversations", {
      title: "t",
      settings: {
        model: "claude-haiku-4-5",
        thinking: "enabled",
        outputReserveTokens: 8_000,
        thinkingBudgetTokens: 8_000,
      },
    });
    expect(high.status).toBe(400);
    expect(high.json.error?.message).toMatch(/^settings\.thinkingBudgetTokens: must be smaller than 8000/);

    const id = await createConversation({
      model: "claude-haiku-4-5",
      thinking: "enabled",
      thinkingBudgetTokens: 6_000,
    });
    const shrink = await patch(id, { outputReserveTokens: 6_000 });
    expect(shrink.status).toBe(400);
    expect(shrink.json.error?.message).toMatch(/^settings\.thinkingBudgetTokens: must be smaller than 6000/);
  });

  it("leaves the platform's own title call as it was", async () => {
    const made = await api("POST", "/v1/conversations", {
      settings: { model: "claude-haiku-4-5", thinking: "enabled", thinkingBudgetTokens: 2_048 },
    });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id;
    expect((await send(id, "Plan a trip to Lisbon")).status).toBe(200);
    // The title is a summarization call (the least thinking the model allows), and it lands.
    const title = await eventually(async () => {
      const t = (await api("GET", `/v1/conversations/${id}`)).json.title;
      return t !== DEFAULT_TITLE ? t : null;
    });
    expect(title).toBe("Plan a trip to Lisbon");
  });

  it("runs a sub-agent's tool loop with the conversation's thinking", async () => {
    const id = await createConversation({ model: "claude-haiku-4-5" });
    expect((await send(id, '@tool tool_activate {"name":"agent_delegate"}')).status).toBe(200);
    expect((await patch(id, { thinking: "enabled", thinkingBudgetTokens: 2_048 })).status).toBe(200);
    const task = '@tool conversation_read {"from_seq":1,"to_seq":1}';
    const r = await send(id, `@tool agent_delegate ${JSON.stringify({ name: "r", task })}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const results = r.json.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(results.length).toBeGreaterThan(0);
    expect(results.filter((b) => b.is_error)).toEqual([]);
    expect(JSON.stringify(results)).toMatch(/tool_activate/);
  });
});

describe('thinking "enabled" when the tool loop\'s prefix moves', () => {
  it("a tool activated mid-turn does not fail the turn", async () => {
    const id = await createConversation({ model: "claude-haiku-4-5", thinking: "enabled" });
    const r = await send(
      id,
      '@tools-per-step 1\n@tool tool_activate {"name":"conversation_list"}\n@tool conversation_list {}',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
  });
});

describe('thinking "enabled" when a call\'s max_tokens is cut', () => {
  /** Every request the turns sent, oldest first. */
  async function requestsOf(id: string): Promise<ModelRequest[]> {
    const list = (await api("GET", `/v1/conversations/${id}/prompts?limit=50`)).json.data as { id: number }[];
    const all: ModelRequest[] = [];
    for (const p of list.toReversed())
      all.push((await api("GET", `/v1/conversations/${id}/prompts/${p.id}`)).json as unknown as ModelRequest);
    return all;
  }

  it("the retry after an overflow 400 keeps the budget below its cut max_tokens, or goes without thinking", async () => {
    const id = await createConversation({
      model: "claude-haiku-4-5",
      thinking: "enabled",
      thinkingBudgetTokens: 4_000,
    });
    // The second call overflows (each time: the directive stays in the prompt), so the retry goes
    // out with max_tokens cut to the reserve the 400's maximum leaves, well under the 4,000 budget.
    const r = await send(id, 'read\n@tool conversation_read {"from_seq":1,"to_seq":1}\n@model-error overflow call=2');
    expect(r.json.error?.message ?? "").not.toMatch(/budget_tokens/);
    expect(r.json.error?.type).toBe("context_overflow");
    const sent = await requestsOf(id);
    const cut = sent.filter((q) => q.max_tokens < 4_000);
    expect(cut.length).toBeGreaterThan(0);
    for (const q of sent)
      if (q.thinking?.type === "enabled") expect(q.thinking.budget_tokens).toBeLessThan(q.max_tokens);
  });
});
