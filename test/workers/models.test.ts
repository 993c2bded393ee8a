// The model catalog through the API: GET /v1/models, settings checked against the model they name
// (a retired model refused naming its replacement, an unknown one asked of the Models API), a
// stored conversation whose model retired moving to the replacement at its next turn, and the
// settings a tenant and a project give their new conversations.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  connectSocket,
  createConversation,
  eventually,
  inConversation,
  newTenant,
  newTenantWithId,
  sendSse,
} from "./helpers";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

describe("GET /v1/models", () => {
  it("lists the catalog with its sources, the default first-class, and the retired ones with their replacements", async () => {
    const r = await api("GET", "/v1/models");
    expect(r.status).toBe(200);
    expect(r.json.defaultModel).toBe("claude-sonnet-5-5");
    const sonnet = r.json.data.find((m) => m.id === "claude-sonnet-5-5");
    expect(sonnet).toMatchObject({
      default: true,
      status: "active",
      contextWindowTokens: 1_000_000,
      maxOutputTokens: 128_000,
      prefill: false,
      forcedToolChoice: false,
      tokenizerRatio: 1.3,
    });
    expect(sonnet!.thinking).toMatchObject({
      modes: ["adaptive", "between_tools"],
      default: "adaptive",
      display: "omitted",
    });
    expect(sonnet!.prices).toMatchObject({ currency: "USD", input: 2, output: 10, cacheRead: 0.1 });
    expect(r.json.data.every((m) => m.sources.length > 0)).toBe(true);
    const retired = (await api("GET", "/v1/models?status=retired")).json.data;
    expect(retired.find((m) => m.id === "claude-sonnet-4-5")).toMatchObject({
      status: "retired",
      retiredOn: "2026-11-30",
      replacement: "claude-sonnet-5-5",
    });
    expect((await api("GET", "/v1/models?status=nope")).status).toBe(400);
  });

  it("finds one by id or alias, asks the Models API for one the catalog lacks, and 404s an unknown one", async () => {
    expect((await api("GET", "/v1/models/claude-sonnet-4-5-20250929")).json).toMatchObject({
      id: "claude-sonnet-4-5",
      status: "retired",
    });
    expect((await api("GET", "/v1/models/claude-haiku-4-5-20251001")).json).toMatchObject({
      id: "claude-haiku-4-5",
      contextWindowTokens: 200_000,
    });
    // A test model only the (offline) Models API knows: conservative limits, not priced.
    const known = await api("GET", "/v1/models/offline-20k");
    expect(known.status).toBe(200);
    expect(known.json).toMatchObject({
      id: "offline-20k",
      catalog: false,
      contextWindowTokens: 20_000,
      prices: null,
      prefill: false,
      tokenizerRatio: 1.35,
    });
    expect((await api("GET", "/v1/models/claude-nonexistent-9")).status).toBe(404);
  });
});

describe("settings against their model", () => {
  it("refuses a retired model naming its replacement, and an unknown one naming the catalog", async () => {
    const id = await createConversation();
    const retired = await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "claude-sonnet-4-5" } });
    expect(retired.status).toBe(400);
    expect(retired.json.error?.message).toBe(
      "settings.model: claude-sonnet-4-5 retired on 2026-11-30; use claude-sonnet-5-5 (Claude Sonnet 5.5), its replacement",
    );
    const unknown = await api("POST", "/v1/conversations", { settings: { model: "claude-nonexistent-9" } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.message).toMatch(
      /^settings\.model: unknown model claude-nonexistent-9: not in the model catalog \(GET \/v1\/models\), and Anthropic's Models API does not know it/,
    );
  });

  it("checks effort, thinking and the output reserve against what the model takes", async () => {
    const id = await createConversation();
    const bad = async (settings: object) =>
      (await api("PATCH", `/v1/conversations/${id}`, { settings })).json.error?.message;
    expect(await bad({ thinking: "disabled" })).toMatch(
      /^settings\.thinking: claude-sonnet-5-5 does not take "disabled"/,
    );
    expect(await bad({ thinking: "between_tools", effort: "max" })).toMatch(/needs settings.effort at high or below/);
    expect(await bad({ outputReserveTokens: 200_000 })).toMatch(/^settings\.outputReserveTokens: at most 128000/);
    expect(await bad({ serverTools: ["web_search", "web_search"] })).toMatch(/serverTools/);
    // Claude Opus 5 has web search only: web fetch is refused by name, and a replay never carries it.
    expect(await bad({ model: "claude-opus-5", serverTools: ["web_search", "web_fetch"] })).toBe(
      "settings.serverTools: claude-opus-5 has no web_fetch (it offers web_search)",
    );
    const opus5 = await api("PATCH", `/v1/conversations/${id}`, {
      settings: { model: "claude-opus-5", serverTools: ["web_search"] },
    });
    expect(opus5.status).toBe(200);
    const opus5Tools = (await api("GET", `/v1/conversations/${id}/replay`)).json.tools as { type?: string }[];
    expect(opus5Tools.filter((t) => t.type).map((t) => t.type)).toEqual(["web_search_20250305"]);
    const card = (await api("GET", "/v1/models/claude-opus-5")).json;
    expect([card.serverTools, card.serverToolNames]).toEqual([true, ["web_search"]]);
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "claude-sonnet-5-5" } })).status).toBe(
      200,
    );
    const ok = await api("PATCH", `/v1/conversations/${id}`, {
      settings: { thinking: "between_tools", effort: "low", thinkingDisplay: "omitted" },
    });
    expect(ok.status).toBe(200);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.thinking).toEqual({ type: "between_tools" });
    expect(replay.output_config).toEqual({ effort: "low" });
  });

  it("plans a settings change against the model it lands on: two PATCHes at once never store settings the model refuses", async () => {
    for (let round = 0; round < 3; round++) {
      const id = await createConversation();
      const [model, reserve] = await Promise.all([
        api("PATCH", `/v1/conversations/${id}`, { settings: { model: "claude-haiku-4-5" } }),
        api("PATCH", `/v1/conversations/${id}`, { settings: { outputReserveTokens: 100_000 } }),
      ]);
      expect(model.status).toBe(200);
      const settings = (await api("GET", `/v1/conversations/${id}`)).json.settings;
      expect(settings.model).toBe("claude-haiku-4-5");
      // Haiku 4.5: 64K output, a 200K window. The reserve either landed first and moved with the
      // model, or came second and was refused against Haiku.
      expect(settings.outputReserveTokens).toBeLessThanOrEqual(64_000);
      expect(settings.contextWindowTokens).toBe(200_000);
      if (reserve.status !== 200)
        expect(reserve.json.error?.message).toMatch(
          /^settings\.outputReserveTokens: at most 64000 for claude-haiku-4-5/,
        );
    }
  });

  it("refuses settings that would send a between_tools request at another effort than the thinking it reads back", async () => {
    const patch = (id: string, settings: object) => api("PATCH", `/v1/conversations/${id}`, { settings });
    const ranAt = (was: string, asked: string) =>
      `settings.effort: with thinking "between_tools" the effort cannot change within a conversation: its thinking ran at ${was} (asked: ${asked}); keep ${was}, use thinking "adaptive", or start a new conversation`;
    const id = await createConversation({ thinking: "between_tools", effort: "low" });
    // No thinking yet: nothing ran at the old effort.
    expect((await patch(id, { effort: "medium" })).status).toBe(200);
    const first = await sendSse(id, 'Look it up.\n@tool memory_search {"query":"lake"}');
    expect(first.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    expect((await patch(id, { effort: "high" })).json.error?.message).toBe(ranAt("medium", "high"));
    // Round the rule: through adaptive, or another model, and back, is refused at the last step.
    expect((await patch(id, { thinking: "adaptive" })).status).toBe(200);
    expect((await patch(id, { effort: "high" })).status).toBe(200);
    expect((await patch(id, { thinking: "between_tools" })).json.error?.message).toBe(ranAt("medium", "high"));
    expect((await patch(id, { model: "claude-opus-5-5" })).status).toBe(200);
    expect(
      (await patch(id, { model: "claude-sonnet-5-5", thinking: "between_tools", effort: "high" })).json.error?.message,
    ).toBe(ranAt("medium", "high"));
    // Back at the effort it ran at: taken, and the next turn runs.
    expect((await patch(id, { model: "claude-sonnet-5-5", thinking: "between_tools", effort: "medium" })).status).toBe(
      200,
    );
    const second = await sendSse(id, 'Again.\n@tool memory_search {"query":"fjord"}');
    expect(second.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    // Settings that already disagree with the history (a PATCH that raced a reply) refuse no rename.
    await inConversation(id, (instance) =>
      instance.record.updateHead((h) => ({
        next: { ...h, settings: { ...h.settings, effort: "high" } },
        result: null,
      })),
    );
    expect((await api("PATCH", `/v1/conversations/${id}`, { title: "renamed" })).status).toBe(200);
  });

  it("holds a between_tools effort change while a turn runs (409), and takes it once the turn ends", async () => {
    const id = await createConversation({ thinking: "between_tools", effort: "low" });
    const watch = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const turn = sendSse(id, "Tell me about lakes.\n@reply-chars 1500\n@hold-stream after=200");
    const start = await watch.next((e) => e.type === "turn_start");
    await watch.next((e) => e.type === "delta" && e.turnId === start.turnId);
    // The call in flight stores its reply only when it ends: no reply of effort low is there yet.
    const busy = await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } });
    expect(busy.status).toBe(409);
    expect(busy.json.error).toEqual({
      type: "turn_in_progress",
      message:
        'settings.effort: a turn is running with thinking "between_tools" at effort low; under "between_tools" neither changes within a turn; send the change again when the turn ends',
    });
    // Nor round the rule, through adaptive and back.
    const viaAdaptive = await api("PATCH", `/v1/conversations/${id}`, { settings: { thinking: "adaptive" } });
    expect(viaAdaptive.status).toBe(409);
    expect(viaAdaptive.json.error?.message).toMatch(/^settings\.thinking: a turn is running/);
    // What the turn does not send mid-way is taken meanwhile: a rename, the same effort.
    expect((await api("PATCH", `/v1/conversations/${id}`, { title: "lakes" })).status).toBe(200);
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "low" } })).status).toBe(200);
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).status).toBe(200);
    await turn;
    watch.ws!.close();
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "medium" } })).status).toBe(200);
  });

  it("reads only what goes back: a sub-agent's marked thinking does not hold the effort", async () => {
    const id = await createConversation({ thinking: "between_tools", effort: "medium" });
    await inConversation(id, (instance) =>
      instance.record.append([
        {
          role: "user",
          content: [{ type: "text", text: "a sub-agent's task" }],
          agent: { segment: "seg_1", name: "helper", toolUseId: "toolu_1" },
        },
        {
          role: "assistant",
          content: [{ type: "text", text: "its answer" }],
          model: "claude-sonnet-5-5",
          betweenToolsEffort: "medium",
          agent: { segment: "seg_1", name: "helper", toolUseId: "toolu_1" },
        },
      ]),
    );
    expect((await api("PATCH", `/v1/conversations/${id}`, { settings: { effort: "low" } })).status).toBe(200);
  });

  it("moves the model's own figures with a model change: a model only the Models API knows brings its window", async () => {
    const id = await createConversation();
    const moved = await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "offline-20k" } });
    expect(moved.status).toBe(200);
    expect(moved.json.settings).toMatchObject({
      model: "offline-20k",
      contextWindowTokens: 20_000,
      outputReserveTokens: 5_000,
      charsPerToken: 1.11,
    });
  });
});

describe("a conversation whose model retired", () => {
  it("moves to the replacement at its next turn, with an event, a timeline card and a line in the lifecycle log", async () => {
    const id = await createConversation();
    // A conversation from before the catalog: on Claude Sonnet 4.5, with the old defaults.
    await runInDurableObject(stubOf(id), async (_i, state) => {
      const raw = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'head'").one().value;
      const head = JSON.parse(raw);
      head.settings = {
        ...head.settings,
        model: "claude-sonnet-4-5",
        contextWindowTokens: 200_000,
        outputReserveTokens: 8_192,
        charsPerToken: 1.5,
      };
      delete head.settings.effort;
      delete head.settings.thinking;
      state.storage.sql.exec("UPDATE kv SET value = ? WHERE key = 'head'", JSON.stringify(head));
    });
    await evictDurableObject(stubOf(id));
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-sonnet-4-5");
    // /replay shows the request the next turn will send: on the replacement, with its settings.
    const view = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(view).toMatchObject({ model: "claude-sonnet-5-5", max_tokens: 32_000 });
    expect(view.estimate.budgetTokens).toBe(1_000_000 - 32_000);
    const events = await sendSse(id, "hello after the retirement");
    expect(events.find((e) => e.type === "model_changed")).toMatchObject({
      from: "claude-sonnet-4-5",
      to: "claude-sonnet-5-5",
      reason: "retired",
      retiredOn: "2026-11-30",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    // The turn's prompt snapshot measures the request against the budget it was sent under.
    const [snapshot] = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snapshot.budgetTokens).toBe(1_000_000 - 32_000);
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(meta.settings).toMatchObject({
      model: "claude-sonnet-5-5",
      contextWindowTokens: 1_000_000,
      outputReserveTokens: 32_000,
      charsPerToken: 1.15,
      thinking: "auto",
    });
    const cards = (await api("GET", `/v1/conversations/${id}/timeline`)).json.data;
    expect(cards).toContainEqual(
      expect.objectContaining({ type: "model_changed", card: expect.objectContaining({ to: "claude-sonnet-5-5" }) }),
    );
    const day = new Date().toISOString().slice(0, 10);
    const log = await eventually(async () => {
      const r = await api("GET", `/v1/corpus/${day}`);
      return r.status === 200 && r.text.includes("model.changed") && r.text.includes(id) ? r.text : null;
    });
    expect(log).toContain("claude-sonnet-4-5");
  });
});

describe("settings a tenant and a project give new conversations", () => {
  it("start every conversation: the model's defaults, then the tenant's, then the project's, then the request's", async () => {
    const key = await newTenant();
    const put = await api(
      "PUT",
      "/v1/settings",
      { settings: { serverTools: ["web_search"], effort: "low", tailMessages: 10 } },
      { key },
    );
    expect(put.status).toBe(200);
    expect(put.json.effective).toMatchObject({
      model: "claude-sonnet-5-5",
      serverTools: ["web_search"],
      effort: "low",
      tailMessages: 10,
    });
    expect((await api("GET", "/v1/settings", undefined, { key })).json.settings).toEqual({
      serverTools: ["web_search"],
      effort: "low",
      tailMessages: 10,
    });
    const plain = await api("POST", "/v1/conversations", {}, { key });
    expect(plain.json.settings).toMatchObject({ serverTools: ["web_search"], effort: "low", tailMessages: 10 });
    const project = await api(
      "POST",
      "/v1/projects",
      { name: "research", settings: { serverTools: ["web_search", "web_fetch"], tailMessages: 12 } },
      { key },
    );
    expect(project.status).toBe(201);
    const inProject = await api(
      "POST",
      "/v1/conversations",
      { projectId: project.json.id, settings: { tailMessages: 14 } },
      { key },
    );
    expect(inProject.json.settings).toMatchObject({
      serverTools: ["web_search", "web_fetch"],
      effort: "low",
      tailMessages: 14,
    });
    // Inherited server tools the chosen model lacks are left out, not refused (the caller named only the model).
    const onOpus = await api(
      "POST",
      "/v1/conversations",
      { projectId: project.json.id, settings: { model: "claude-opus-5" } },
      { key },
    );
    expect(onOpus.status, onOpus.text).toBe(201);
    expect(onOpus.json.settings.serverTools).toEqual(["web_search"]);
    // The request's tools carry the server tools the conversation opted into.
    const tools = (await api("GET", `/v1/conversations/${inProject.json.id}/replay`, undefined, { key })).json.tools;
    expect(tools.filter((t) => t.type)).toEqual([
      { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      { type: "web_fetch_20250910", name: "web_fetch", max_uses: 5, max_content_tokens: 20_000 },
    ]);
    // Checked like a conversation's settings; nothing is written when refused.
    const refused = await api(
      "PATCH",
      `/v1/projects/${project.json.id}`,
      { settings: { model: "claude-sonnet-4-5" } },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error?.message).toMatch(/^settings\.model: claude-sonnet-4-5 retired/);
    expect((await api("GET", `/v1/projects/${project.json.id}`, undefined, { key })).json.settings).toEqual({
      serverTools: ["web_search", "web_fetch"],
      tailMessages: 12,
    });
    // Another tenant's conversations are untouched by these.
    expect((await api("POST", "/v1/conversations", {})).json.settings.serverTools).toEqual([]);
  });

  it("never refuse a conversation for what is inherited: a retired default moves to its replacement, a named model takes them over", async () => {
    const { key, tenantId } = await newTenantWithId();
    // Set before the model retired (PUT would refuse it now): Claude Sonnet 4.5, thinking off between tools.
    await env.DB.prepare("UPDATE tenants SET settings = ? WHERE id = ?")
      .bind(JSON.stringify({ model: "claude-sonnet-4-5", effort: "low" }), tenantId)
      .run();
    const made = await api("POST", "/v1/conversations", {}, { key });
    expect(made.status).toBe(201);
    expect(made.json.settings).toMatchObject({
      model: "claude-sonnet-5-5",
      effort: "low",
      contextWindowTokens: 1_000_000,
    });
    expect((await api("GET", "/v1/settings", undefined, { key })).json.effective.model).toBe("claude-sonnet-5-5");
    await env.DB.prepare("UPDATE tenants SET settings = ? WHERE id = ?")
      .bind(JSON.stringify({ thinking: "between_tools", effort: "low" }), tenantId)
      .run();
    const named = await api("POST", "/v1/conversations", { settings: { model: "claude-opus-5-5" } }, { key });
    expect(named.status).toBe(201);
    expect(named.json.settings).toMatchObject({ model: "claude-opus-5-5", thinking: "auto", effort: "low" });
    // What the request itself names is still checked.
    expect(
      (
        await api(
          "POST",
          "/v1/conversations",
          { settings: { model: "claude-opus-5-5", thinking: "between_tools" } },
          { key },
        )
      ).status,
    ).toBe(400);
  });

  it("an inherited fallback model that retired moves to its replacement (or goes, when that is the model): conversations, channels and GET /v1/settings take it", async () => {
    const { key, tenantId } = await newTenantWithId();
    const inherit = (settings: object) =>
      env.DB.prepare("UPDATE tenants SET settings = ? WHERE id = ?").bind(JSON.stringify(settings), tenantId).run();
    // Saved before Claude Sonnet 4.5 retired (PUT refuses it now).
    await inherit({ model: "claude-opus-5-5", refusalFallbackModel: "claude-sonnet-4-5" });
    const made = await api("POST", "/v1/conversations", {}, { key });
    expect(made.status, made.text).toBe(201);
    expect(made.json.settings).toMatchObject({ model: "claude-opus-5-5", refusalFallbackModel: "claude-sonnet-5-5" });
    const shown = await api("GET", "/v1/settings", undefined, { key });
    expect(shown.status).toBe(200);
    expect(shown.json.effective).toMatchObject({ refusalFallbackModel: "claude-sonnet-5-5" });
    const posted = await api("POST", "/v1/channels/inbox/messages", { content: "hello" }, { key });
    expect(posted.status, posted.text).toBe(200);
    // Its replacement is the model itself: no fallback, rather than a refusal.
    await inherit({ model: "claude-sonnet-5-5", refusalFallbackModel: "claude-sonnet-4-5" });
    const same = await api("POST", "/v1/conversations", {}, { key });
    expect(same.status, same.text).toBe(201);
    expect(same.json.settings).toMatchObject({ model: "claude-sonnet-5-5", refusalFallbackModel: null });
    // A stored setting no model check can pass: a channel's message is refused as a conversation is, naming it.
    await inherit({ refusalFallbackModel: "claude-no-such-model-9" });
    const conversation = await api("POST", "/v1/conversations", {}, { key });
    const channel = await api("POST", "/v1/channels/another/messages", { content: "hello" }, { key });
    expect(conversation.status).toBeGreaterThanOrEqual(400);
    expect(conversation.status).toBeLessThan(500);
    expect({ status: channel.status, message: channel.json.error?.message }).toEqual({
      status: conversation.status,
      message: conversation.json.error?.message,
    });
  });

  it("refuse tenant settings under which a project could start no conversation, naming the project; nothing written", async () => {
    const { key } = await newTenantWithId();
    expect((await api("PUT", "/v1/settings", { settings: { compactTriggerRatio: 0.9 } }, { key })).status).toBe(200);
    // Valid over the tenant's 0.9; the default trigger is below 0.8.
    const project = await api(
      "POST",
      "/v1/projects",
      { name: "ratios", settings: { compactTargetRatio: 0.8 } },
      { key },
    );
    expect(project.status).toBe(201);
    const reset = await api("PUT", "/v1/settings", { settings: {} }, { key });
    expect(reset.status).toBe(400);
    expect(reset.json.error?.message).toBe(
      `settings: project ${project.json.id} ("ratios") could start no conversation over these settings (settings.compactTargetRatio: must be smaller than settings.compactTriggerRatio); change its settings first`,
    );
    expect((await api("GET", "/v1/settings", undefined, { key })).json.settings).toEqual({ compactTriggerRatio: 0.9 });
    expect((await api("POST", "/v1/conversations", { projectId: project.json.id }, { key })).status).toBe(201);
    // Once the project no longer needs the tenant's value, the tenant may drop it.
    await api("PATCH", `/v1/projects/${project.json.id}`, { settings: {} }, { key });
    expect((await api("PUT", "/v1/settings", { settings: {} }, { key })).status).toBe(200);
  });
});
