// Turns on today's models against the strict offline model, which refuses what the real API
// refuses: thinking streamed and stored with its signature and sent back within the tool loop,
// continuations without prefill, refusals (with and without a fallback model), a paused server-tool
// turn, a stream that breaks mid-way, and the usage ledger with its cost.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CONTINUE_PROMPT } from "../../core/replay-rules";
import { api, createConversation, eventually, newTenant, send, sendSse, transcript, turnMessages } from "./helpers";
import { ofType } from "../blocks";
import type { ContentBlock, WireMessage } from "../../core/types";

const types = (m: { content: readonly { type: string }[] }) => m.content.map((b) => b.type);

describe("thinking", () => {
  it("streams as its own event, is stored with its signature, and goes back unchanged through a tool loop", async () => {
    const id = await createConversation();
    const events = await sendSse(id, 'read the first message\n@tool conversation_read {"from_seq":1,"to_seq":1}');
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    const thinking = events.filter((e) => e.type === "thinking");
    expect(thinking.length).toBeGreaterThan(0);
    // "summarized" by default: readable thinking, and the note before the tool call inside it.
    expect(thinking.map((e) => e.text).join("")).toMatch(/\w/);
    const replies = (await transcript(id)).filter((m) => m.role === "assistant");
    expect(replies).toHaveLength(2);
    expect(types(replies[0])).toEqual(["thinking", "thinking", "tool_use"]);
    expect(ofType(replies[0].content[0], "thinking").signature).toMatch(/\S{40,}/);
    // The second call carried the first reply's thinking back exactly (the offline model checks
    // each signature against what it produced), and the turn went on.
    expect(types(replies[1])[0]).toBe("thinking");
  });

  it("is left out of the turn's next call once something before it changed (a tool activated mid-turn)", async () => {
    const id = await createConversation();
    // Step 1 activates a tool: the tools the next call carries change, and the thinking of step 1
    // was produced under the old ones. Sent back, it would be a 400 (bound to a different conversation).
    const r = await send(
      id,
      '@tools-per-step 1\n@tool tool_activate {"name":"conversation_list"}\n@tool conversation_list {}',
    );
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const calls = r.json.messages
      .flatMap((m) => m.content)
      .filter((b) => b.type === "tool_use")
      .map((b) => b.name);
    expect(calls).toEqual(["tool_activate", "conversation_list"]);
    const results = r.json.messages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(results.every((b) => !b.is_error)).toBe(true);
  });

  it("shows nothing of it under display omitted, and a redacted block is stored and sent back as it came", async () => {
    const id = await createConversation({ thinkingDisplay: "omitted" });
    const events = await sendSse(id, '@redacted-thinking\n@tool conversation_read {"from_seq":1,"to_seq":1}');
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    expect(events.filter((e) => e.type === "thinking").every((e) => e.text === "")).toBe(true);
    expect(events.some((e) => e.type === "thinking" && e.redacted)).toBe(true);
    const first = (await transcript(id)).find((m) => m.role === "assistant");
    expect(first!.content.find((b) => b.type === "thinking")!.thinking).toBe("");
    expect(first!.content.find((b) => b.type === "redacted_thinking")!.data).toMatch(/\S/);
  });
});

describe("a reply cut off", () => {
  it("by max_tokens continues through a user message, never a prefill the model refuses", async () => {
    const id = await createConversation();
    const r = await send(id, "write at length\n@max-tokens-stop");
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const stops = r.json.messages.filter((m) => m.role === "assistant").map((m) => m.stopReason);
    expect(stops).toEqual(["max_tokens", "end_turn"]);
    // The continuation's request, as sent (its prompt snapshot), ends on the continuation prompt.
    const newest = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data[0];
    const sent = await eventually(async () => {
      const r = await api("GET", `/v1/conversations/${id}/prompts/${newest.id}`);
      return r.status === 200 ? r.json : null;
    });
    // The snapshot is the request as sent: a Messages API request.
    const sentMessages = sent.messages as WireMessage[];
    expect(sentMessages.at(-1)).toMatchObject({ role: "user", content: [{ type: "text", text: CONTINUE_PROMPT }] });
    expect(sentMessages.at(-2)!.role).toBe("assistant");
  });

  it("while still thinking continues with more room, and the turn does not end empty", async () => {
    const id = await createConversation();
    const r = await send(id, "think hard\n@max-tokens-stop thinking");
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const replies = turnMessages(r).filter((m) => m.role === "assistant");
    expect(types(replies[0])).toEqual(["thinking"]);
    expect(replies.at(-1)!.content.some((b) => b.type === "text" && b.text.trim())).toBe(true);
  });

  it("by an error inside the stream keeps the streamed text and is asked again", async () => {
    const id = await createConversation();
    const events = await sendSse(
      id,
      "answer at length\n@reply-chars 600\n@stream-error overloaded_error after=80 attempts=1",
    );
    expect(events.find((e) => e.type === "retry")).toMatchObject({ attempt: 1, error: { type: "overloaded_error" } });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    const replies = (await transcript(id)).filter((m) => m.role === "assistant");
    // What was streamed before the break is saved as the partial reply it is.
    const before = events
      .slice(
        0,
        events.findIndex((e) => e.type === "retry"),
      )
      .filter((e) => e.type === "delta")
      .map((e) => e.text)
      .join("");
    expect(replies[0].stopReason).toBe("error");
    expect(replies[0].content).toEqual([{ type: "text", text: before }]);
    expect(before.length).toBeGreaterThan(0);
    expect(replies.at(-1)!.stopReason).toBe("end_turn");
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(JSON.stringify(replay.messages)).toContain(CONTINUE_PROMPT);
  });

  it("by an error inside the stream meters what was streamed before it, not the opening count", async () => {
    const id = await createConversation();
    const events = await sendSse(
      id,
      "answer at length\n@reply-chars 3000\n@stream-error overloaded_error after=2500 attempts=1",
    );
    const end = events.at(-1) as { type: string; usage: { output_tokens: number } };
    expect(end.type).toBe("turn_end");
    const replies = (await transcript(id)).filter((m) => m.role === "assistant");
    const completed = replies.at(-1)!.usage!.output_tokens;
    // About 2,500 chars were generated before the break: hundreds of tokens, billed.
    expect(end.usage.output_tokens - completed).toBeGreaterThan(300);
  });

  it("in an object that dies mid-turn is metered at the object's next start, with what its calls had reported", async () => {
    const id = await createConversation();
    // A stub per use: one that saw the object die stays broken.
    const stub = () => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    // The first call answers (a tool call); the second keeps failing while the SDK backs off.
    const dying = api("POST", `/v1/conversations/${id}/messages`, {
      content: 'Look it up.\n@tool memory_search {"query":"lake"}\n@model-error 500 call=2',
    }).catch((err) => err);
    await eventually(async () => (await transcript(id)).length >= 3, 20_000);
    const spent = (await transcript(id)).find((m) => m.role === "assistant")!.usage!;
    await runInDurableObject(stub(), (_i, state) => state.abort("injected crash")).catch(() => {});
    await dying;
    // The next start puts the dead turn's spending in the outbox; its alarm sends it to the ledger.
    expect((await api("GET", `/v1/conversations/${id}`)).status).toBe(200);
    await runDurableObjectAlarm(stub());
    const rows = await env.DB.prepare(
      `SELECT input_tokens + cache_read_tokens + cache_write_tokens AS i, output_tokens AS o FROM usage_events WHERE conversation_id = ?`,
    )
      .bind(id)
      .all<{ i: number; o: number }>();
    expect(rows.results).toEqual([
      {
        i: spent.input_tokens + spent.cache_read_input_tokens + spent.cache_creation_input_tokens,
        o: spent.output_tokens,
      },
    ]);
  });

  it("by an error that keeps failing ends the turn with a readable error naming the request id", async () => {
    const id = await createConversation();
    const r = await send(id, "@stream-error api_error after=0 attempts=5");
    expect(r.status).toBe(502);
    expect(r.json.error?.message).toMatch(
      /^the model API had an internal error; try again \(api_error\): .*; request id req_\w+$/,
    );
    expect(r.json.error?.message).not.toContain("{");
  });
});

describe("a refusal", () => {
  it("ends the turn refused, and the refused turn is never sent to the model again", async () => {
    const id = await createConversation();
    const r = await send(id, "the refused ask\n@stop refusal cyber");
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("refusal");
    expect(r.json.refusal).toMatchObject({ model: "claude-sonnet-5-5", category: "cyber" });
    // The record keeps it; the next request does not carry it, nor does /replay, its view, before it.
    expect(JSON.stringify(await transcript(id))).toContain("the refused ask");
    expect(JSON.stringify((await api("GET", `/v1/conversations/${id}/replay`)).json.messages)).not.toContain(
      "the refused ask",
    );
    await send(id, "something else");
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(JSON.stringify(replay.messages)).not.toContain("the refused ask");
  });

  it("is asked of the fallback model the settings name, for that turn only", async () => {
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" });
    // The offline model refuses on Claude Sonnet 5.5 only, as a classifier of that model would.
    const r = await send(id, "ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5");
    expect(r.json.stop_reason).toBe("end_turn");
    expect(r.json.refusal).toMatchObject({ category: "frontier_llm", fallbackModel: "claude-opus-5-5" });
    expect(r.json.model_changes).toEqual([
      { from: "claude-sonnet-5-5", to: "claude-opus-5-5", reason: "refusal_fallback" },
    ]);
    expect(r.json.messages.at(-1)!.model).toBe("claude-opus-5-5");
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-sonnet-5-5");
  });

  it("is metered per model: the refused call under the first, the fallback's under the fallback, one turn", async () => {
    const key = await newTenant();
    const id = await createConversation({ refusalFallbackModel: "claude-opus-5-5" }, key);
    const r = await send(id, "ask it\n@stop refusal frontier_llm model=claude-sonnet-5-5", key);
    expect(r.json.refusal).toMatchObject({ fallbackModel: "claude-opus-5-5" });
    const report = await eventually(async () => {
      const u = (await api("GET", "/v1/usage", undefined, { key })).json;
      return u.models?.length === 2 ? u : null;
    });
    const of = (model: string) => report.models.find((m) => m.model === model)!;
    expect(of("claude-sonnet-5-5").output_tokens).toBeGreaterThan(0);
    expect(of("claude-opus-5-5").output_tokens).toBeGreaterThan(0);
    expect(of("claude-sonnet-5-5").output_tokens + of("claude-opus-5-5").output_tokens).toBe(
      r.json.usage!.output_tokens,
    );
    expect(Math.abs(report.total.cost_usd - r.json.usage!.cost_usd!)).toBeLessThan(0.000001);
    expect(report.total.turns).toBe(1);
  });
});

describe("server tools", () => {
  it("web search: its blocks are stored as they came, a paused turn goes on, the search is billed, and later turns replay them as the API requires", async () => {
    const id = await createConversation({ serverTools: ["web_search"] });
    const r = await send(id, "find the tide tables\n@web-search tide tables\n@stop pause_turn");
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe("end_turn");
    const replies = turnMessages(r).filter((m) => m.role === "assistant");
    expect(replies[0].stopReason).toBe("pause_turn");
    const blocks = replies.flatMap((m) => m.content);
    expect(blocks.some((b) => b.type === "server_tool_use" && b.name === "web_search")).toBe(true);
    const result = blocks.find((b) => b.type === "web_search_tool_result") as
      | (ContentBlock & { content: { encrypted_content: string }[] })
      | undefined;
    expect(result!.content[0].encrypted_content).toMatch(/\S/);
    expect(r.json.usage!.web_search_requests).toBe(1);
    // A later turn sends the encrypted results back unchanged: the offline model verifies them.
    const next = await send(id, "thanks; and tomorrow?");
    expect(next.status).toBe(200);
    expect(next.json.stop_reason).toBe("end_turn");
    // Never stubbed or truncated: the replay carries the result as stored.
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(JSON.stringify(replay.messages)).toContain(result!.content[0].encrypted_content);
  });
});

describe("usage and cost", () => {
  it("prices every turn from the catalog, in the turn's answer and in GET /v1/usage per conversation and model", async () => {
    const key = await newTenant();
    const a = await createConversation(undefined, key);
    const b = await createConversation(undefined, key);
    const turns = [await send(a, "one", key), await send(a, "two", key), await send(b, "three", key)];
    for (const t of turns) {
      const u = t.json.usage;
      const expected =
        (u!.input_tokens * 2 +
          u!.output_tokens * 10 +
          u!.cache_creation_input_tokens * 2.5 +
          u!.cache_read_input_tokens * 0.1) /
        1_000_000;
      // Priced to the micro-dollar.
      expect(Math.abs(u!.cost_usd! - expected)).toBeLessThan(0.000001);
      expect(u!.thinking_tokens).toBeGreaterThan(0);
      expect(u!.output_tokens).toBeGreaterThanOrEqual(u!.thinking_tokens!);
    }
    const report = await eventually(async () => {
      const r = await api("GET", "/v1/usage", undefined, { key });
      return r.json.total?.turns === 3 ? r.json : null;
    });
    const sum = turns.reduce((n, t) => n + t.json.usage!.cost_usd!, 0);
    expect(Math.abs(report.total.cost_usd - sum)).toBeLessThan(0.000001);
    expect(report.total.output_tokens).toBe(turns.reduce((n, t) => n + t.json.usage!.output_tokens, 0));
    expect(report.conversations.map((c) => c.conversationId).sort()).toEqual([a, b].sort());
    expect(report.models).toEqual([expect.objectContaining({ model: "claude-sonnet-5-5", turns: 3 })]);
    const one = (await api("GET", `/v1/usage?conversation=${b}`, undefined, { key })).json;
    expect(one.total.turns).toBe(1);
    // Another tenant sees none of it.
    expect((await api("GET", `/v1/usage?conversation=${b}`)).json.total.turns).toBe(0);
    expect((await api("GET", "/v1/usage?from=2026-02-01&to=2026-01-01", undefined, { key })).json.error?.message).toBe(
      "from: must not be after to",
    );
    expect((await api("GET", "/v1/usage?from=2026-02-30", undefined, { key })).status).toBe(400);
    // A day before 1970 is refused, so the default range (30 days back from `to`) stays a real day.
    const early = await api("GET", "/v1/usage?to=0000-01-05", undefined, { key });
    expect(early.status).toBe(400);
    expect(early.json.error?.message).toBe("to: not a calendar day from 1970 on");
    // Near it, the default range starts at 1970-01-01, not before.
    expect((await api("GET", "/v1/usage?to=1970-01-05", undefined, { key })).json).toMatchObject({
      from: "1970-01-01",
      to: "1970-01-05",
    });
  });
});
