// A turn (or a fold) that moves a conversation off its retired model cleans up the settings a PATCH
// would (docs/api-notes.md "Settings a turn runs on"): a refusal fallback that is the new model
// becomes null, and an output reserve the user's own window can no longer hold beside the prompt
// becomes the new model's default reserve (within a quarter of the window). Later PATCHes then pass.
import Anthropic from "@anthropic-ai/sdk";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OFFLINE_BASE_URL } from "../../core/model-client";
import type { Settings } from "../../core/settings";
import { runFoldJob } from "../../workers/summarizer/fold";
import { leasedFold } from "./fold-scripted";
import { api, createConversation, sendSse } from "./helpers";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

/** Puts the conversation on a retired model (claude-sonnet-4-5, replaced by claude-sonnet-5-5) with `settings`. */
async function onRetiredModel(id: string, settings: Partial<Settings>): Promise<void> {
  await runInDurableObject(stubOf(id), async (_i, state) => {
    const raw = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'head'").one().value;
    const head = JSON.parse(raw);
    head.settings = { ...head.settings, model: "claude-sonnet-4-5", ...settings };
    state.storage.sql.exec("UPDATE kv SET value = ? WHERE key = 'head'", JSON.stringify(head));
  });
  await evictDurableObject(stubOf(id));
}

describe("a turn that moves a conversation off its retired model", () => {
  it("drops a refusal fallback that is the new model, and a later PATCH is taken", async () => {
    const id = await createConversation();
    await onRetiredModel(id, {
      contextWindowTokens: 200_000,
      outputReserveTokens: 8_192,
      charsPerToken: 1.5,
      refusalFallbackModel: "claude-sonnet-5-5",
    });
    const events = await sendSse(id, "hello after the retirement");
    expect(events.find((e) => e.type === "model_changed")).toMatchObject({
      from: "claude-sonnet-4-5",
      to: "claude-sonnet-5-5",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stop_reason: "end_turn" });
    const settings = (await api("GET", `/v1/conversations/${id}`)).json.settings;
    expect(settings.model).toBe("claude-sonnet-5-5");
    expect(settings.refusalFallbackModel).toBeNull();
    const patch = await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 10 } });
    expect(patch.status).toBe(200);
  });

  it("gives a user's small window the new model's reserve within a quarter of it", async () => {
    const id = await createConversation();
    await onRetiredModel(id, { contextWindowTokens: 20_000, outputReserveTokens: 8_192, charsPerToken: 1.5 });
    const events = await sendSse(id, "hello after the retirement");
    expect(events.at(-1)).toMatchObject({ type: "turn_end" });
    const settings = (await api("GET", `/v1/conversations/${id}`)).json.settings;
    expect(settings.contextWindowTokens).toBe(20_000);
    expect(settings.outputReserveTokens).toBe(5_000);
    const patch = await api("PATCH", `/v1/conversations/${id}`, { settings: { tailMessages: 10 } });
    expect(patch.status).toBe(200);
  });
});

describe("the replay of a conversation still on its retired model", () => {
  it("shows the request the next turn sends: the reserve the move gives, not the old default's", async () => {
    const id = await createConversation();
    await onRetiredModel(id, { contextWindowTokens: 20_000, outputReserveTokens: 8_192, charsPerToken: 1.5 });
    const replay = (await api("GET", `/v1/conversations/${id}/replay`)).json;
    expect(replay.model).toBe("claude-sonnet-5-5");
    expect(replay.max_tokens).toBe(5_000);
  });
});

describe("a fold on a retired model", () => {
  it("does not ask a refusal fallback that is the replacement itself", async () => {
    const job = await leasedFold();
    await onRetiredModel(job.conversationId, { refusalFallbackModel: "claude-sonnet-5-5" });
    const models: string[] = [];
    const client = new Anthropic({
      apiKey: "offline",
      baseURL: OFFLINE_BASE_URL,
      maxRetries: 0,
      fetch: async (_url: string | URL | Request, init?: RequestInit) => {
        const { model } = JSON.parse(String(init?.body)) as { model: string };
        models.push(model);
        return Response.json({
          id: `msg_${models.length}`,
          type: "message",
          role: "assistant",
          model,
          content: [{ type: "text", text: "I can't help with that." }],
          stop_reason: "refusal",
          stop_details: { type: "refusal", category: "frontier_llm", explanation: null },
          stop_sequence: null,
          usage: { input_tokens: 1500, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        });
      },
    });
    await expect(runFoldJob(job, env as Env, { client, attempts: 1 })).rejects.toThrow(/refused/);
    expect(models).toEqual(["claude-sonnet-5-5"]);
  });
});
