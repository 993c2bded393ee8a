// The Models API's answers are remembered per isolate: a client naming the same unlisted model
// again (GET /v1/models/:id, a settings patch) costs no second upstream call on the platform's
// key, whether the API knew the id or not; made-up ids, which anyone can send, never push out the
// answers for models in use. An answer that never came (the API unreachable) is not remembered.
import Anthropic from "@anthropic-ai/sdk";
import { beforeEach, describe, expect, it } from "vitest";
import { createOfflineModelFetch } from "../../core/offline-model";
import { forgetModelLookups, resolveSettingsModel, resolveTurnModel } from "../../services/models/resolve";

const env = {};

/**
 * A client whose Models API counts its calls: made-up ids answer 404 at once (a flood of them costs
 * no SDK round trip), the rest go to the offline model; `failing` answers 500 while set.
 */
function countingClient() {
  const offline = createOfflineModelFetch({ now: () => Date.UTC(2026, 11, 3) });
  const state = { calls: 0, failing: false };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    if (state.failing) return new Response(JSON.stringify({ type: "error" }), { status: 500 });
    return offline(input, init);
  };
  const sdk = new Anthropic({ apiKey: "offline", baseURL: "https://offline-model.invalid", fetch, maxRetries: 0 });
  const retrieve = (id: string) => {
    state.calls++;
    if (id.startsWith("claude-made-up-")) return Promise.reject(Object.assign(new Error("not found"), { status: 404 }));
    return sdk.models.retrieve(id);
  };
  const client = { models: { retrieve } } as unknown as Anthropic;
  return { client, state };
}

describe("Models API memo", () => {
  beforeEach(() => forgetModelLookups());

  it("asks once for an id the API does not know, however often it is named", async () => {
    const { client, state } = countingClient();
    for (let i = 0; i < 3; i++) {
      const answer = await resolveSettingsModel(env, { id: "claude-made-up-7", client });
      expect(answer.ok).toBe(false);
    }
    expect((await resolveTurnModel(env, "claude-made-up-7", client)).ok).toBe(false);
    expect(state.calls).toBe(1);
  });

  it("asks once for an id the API knows", async () => {
    const { client, state } = countingClient();
    expect((await resolveSettingsModel(env, { id: "offline-20k", client })).ok).toBe(true);
    expect((await resolveSettingsModel(env, { id: "offline-20k", client })).ok).toBe(true);
    expect(state.calls).toBe(1);
  });

  it("keeps the answers for known models however many made-up ids are asked about", async () => {
    const { client, state } = countingClient();
    expect((await resolveSettingsModel(env, { id: "offline-20k", client })).ok).toBe(true);
    for (let i = 0; i < 600; i++) await resolveSettingsModel(env, { id: `claude-made-up-${i}`, client });
    expect(state.calls).toBe(601);
    // A conversation on the known model asks nothing upstream, flood or not.
    expect((await resolveTurnModel(env, "offline-20k", client)).ok).toBe(true);
    expect(state.calls).toBe(601);
  }, 30_000);

  it("does not remember an answer that never came", async () => {
    const { client, state } = countingClient();
    state.failing = true;
    const failed = await resolveTurnModel(env, "offline-20k", client);
    expect(failed).toMatchObject({ ok: false, transient: true });
    state.failing = false;
    expect((await resolveTurnModel(env, "offline-20k", client)).ok).toBe(true);
    expect(state.calls).toBe(2);
  });
});
