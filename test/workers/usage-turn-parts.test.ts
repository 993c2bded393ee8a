// The usage ledger in the corners of a turn: a sub-agent's calls in a turn whose object dies, a web
// search in a reply that was stopped, a refusal fallback across a client-tool pause and across a
// dead object, and the automatic title after a refused reply.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, eventually, newTenant, send, transcript } from "./helpers";
import type { Usage } from "../../core/types";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
interface Row {
  id: string;
  kind: string;
  model: string;
  i: number;
  o: number;
}
const rowsOf = async (id: string) =>
  (
    await env.DB.prepare(
      `SELECT id, kind, model, input_tokens + cache_read_tokens + cache_write_tokens AS i, output_tokens AS o
       FROM usage_events WHERE conversation_id = ? ORDER BY id`,
    )
      .bind(id)
      .all<Row>()
  ).results;
const inputOf = (u: Usage) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/** Kills the conversation's object mid-turn, starts it again and runs its alarm (the dead turn's meter). */
async function crashAndRestart(id: string, dying: Promise<unknown>) {
  await runInDurableObject(stubOf(id), (_i, state) => state.abort("injected crash")).catch(() => {});
  await dying;
  expect((await api("GET", `/v1/conversations/${id}`)).status).toBe(200);
  await runDurableObjectAlarm(stubOf(id));
}

describe("a dead turn's meter", () => {
  it("counts its sub-agent's model calls too", async () => {
    const id = await createConversation();
    const activation = await send(id, '@tool tool_activate {"name":"agent_delegate"}');
    const task = 'Look it up.\n@tool memory_search {"query":"lake"}\n@model-error 500 call=2';
    const dying = api("POST", `/v1/conversations/${id}/messages`, {
      content: `@tool agent_delegate ${JSON.stringify({ name: "reader", task })}`,
    }).catch((err) => err);
    await eventually(async () => (await transcript(id)).some((m) => m.agent && m.role === "assistant"), 20_000);
    const all = await transcript(id);
    const main = all.filter((m) => !m.agent && m.role === "assistant").at(-1)!.usage!;
    const sub = all.find((m) => m.agent && m.role === "assistant")!.usage!;
    await crashAndRestart(id, dying);
    const dead = (await rowsOf(id)).filter((r) => r.kind === "turn" && !r.id.startsWith(activation.json.turnId!));
    expect(dead.reduce((n, r) => n + r.o, 0)).toBe(main.output_tokens + sub.output_tokens);
    expect(dead.reduce((n, r) => n + r.i, 0)).toBe(inputOf(main) + inputOf(sub));
  });

  it("keeps a refusal fallback's split: the refused call under the first model, the fallback's under it", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" });
    const dying = api("POST", `/v1/conversations/${id}/messages`, {
      content:
        'ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5\n@tool memory_search {"query":"lake"}\n@model-error 500 call=2',
    }).catch((err) => err);
    await eventually(async () => (await transcript(id)).filter((m) => m.role === "assistant").length >= 2, 20_000);
    const [refused, answered] = (await transcript(id)).filter((m) => m.role === "assistant");
    expect([refused.model, answered.model]).toEqual(["claude-sonnet-5-5", "claude-opus-5-5"]);
    await crashAndRestart(id, dying);
    const rows = (await rowsOf(id)).filter((r) => r.kind === "turn");
    const of = (model: string) => rows.filter((r) => r.model === model);
    expect(of("claude-sonnet-5-5").map((r) => [r.i, r.o])).toEqual([
      [inputOf(refused.usage!), refused.usage!.output_tokens],
    ]);
    // The fallback's row: its answer (the call after it failed before it streamed anything).
    expect(of("claude-opus-5-5").map((r) => [r.i, r.o])).toEqual([
      [inputOf(answered.usage!), answered.usage!.output_tokens],
    ]);
    expect(rows).toHaveLength(2);
  });
});

describe("a delegated run's calls", () => {
  it("are metered once in a turn that ends as usual: its rows add up to the turn's usage", async () => {
    const id = await createConversation();
    await send(id, '@tool tool_activate {"name":"agent_delegate"}');
    const task = 'Look it up.\n@tool memory_search {"query":"lake"}';
    const r = await send(id, `@tool agent_delegate ${JSON.stringify({ name: "reader", task })}`);
    expect(r.json.stop_reason).toBe("end_turn");
    const usage = r.json.usage!;
    const rows = await eventually(async () => {
      const mine = (await rowsOf(id)).filter((row) => row.id.startsWith(r.json.turnId!));
      return mine.length ? mine : null;
    });
    expect(rows.reduce((n, row) => n + row.o, 0)).toBe(usage.output_tokens);
    expect(rows.reduce((n, row) => n + row.i, 0)).toBe(inputOf(usage));
  });
});

describe("a stopped reply", () => {
  it("bills the web search it had finished before the stop", async () => {
    const id = await createConversation({ serverTools: ["web_search"] });
    const watch = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const turn = send(id, "find the tide tables\n@web-search tide tables\n@reply-chars 3000\n@hold-stream after=300");
    await watch.next((e) => e.type === "delta");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).status).toBe(200);
    const r = await turn;
    watch.ws!.close();
    expect(r.json.stop_reason).toBe("interrupted");
    expect(r.json.usage!.web_search_requests).toBe(1);
    // Its $0.01 is in the cost: more than the tokens alone would make.
    expect(r.json.usage!.cost_usd!).toBeGreaterThanOrEqual(0.01);
  });
});

describe("a refusal fallback", () => {
  it("answers the rest of a turn that paused on a client tool, after the client's results", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" });
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: 'ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5\n@tool get_weather {"city":"Paris"}',
      tools: [weather],
    });
    expect(paused.json.stop_reason).toBe("requires_action");
    const call = paused.json.requires_action!.calls[0];
    const done = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "sunny" }],
    });
    expect(done.status, done.text).toBe(200);
    const models = (await transcript(id)).filter((m) => m.role === "assistant").map((m) => m.model);
    expect(models).toEqual(["claude-sonnet-5-5", "claude-opus-5-5", "claude-opus-5-5"]);
    const parts = await eventually(async () => {
      const rows = (await rowsOf(id)).filter((r) => r.kind === "turn" && /:\d+$/.test(r.id));
      return rows.length ? rows : null;
    });
    expect(parts.map((r) => r.model)).toEqual(["claude-opus-5-5"]);
  });

  it("that no longer resolves when the paused turn goes on: the turn waits, never back on the model that refused", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" });
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: 'ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5\n@tool get_weather {"city":"Paris"}',
      tools: [weather],
    });
    // The fallback the pause recorded is gone by the time the results come (a model the catalog lost).
    await runInDurableObject(stubOf(id), async (instance) => {
      const turns = (instance as unknown as { paused: { get(): Promise<Record<string, unknown> | null> } }).paused;
      const turn = (await turns.get())!;
      turn.model = "claude-gone-9";
      await (turns as unknown as { write(t: unknown): Promise<void> }).write(turn);
      (turns as unknown as { current: unknown }).current = turn;
    });
    const call = paused.json.requires_action!.calls[0];
    const r = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "sunny" }],
    });
    expect(r.json.error).toMatchObject({ type: "model_unavailable" });
    const models = (await transcript(id)).filter((m) => m.role === "assistant").map((m) => m.model);
    expect(models).toEqual(["claude-sonnet-5-5", "claude-opus-5-5"]);
  });

  it("leaves the automatic title to the conversation's own model", async () => {
    const key = await newTenant();
    // Untitled (the helper's conversations have a title).
    const created = await api(
      "POST",
      "/v1/conversations",
      { settings: { refusalFallbackModel: "claude-opus-5-5" } },
      { key },
    );
    const id = created.json.id;
    const r = await send(id, "ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5", key);
    expect(r.json.refusal).toMatchObject({ fallbackModel: "claude-opus-5-5" });
    const title = await eventually(async () => (await rowsOf(id)).find((row) => row.kind === "title") ?? null);
    expect(title.model).toBe("claude-sonnet-5-5");
  });
});
