// Settings a conversation inherits and keeps: a project's settings checked as they are applied (one
// path: a model it names moves the settings below to it as a model change does, a tenant's own
// window staying where the model takes it), a rename that needs no model planning, a
// refusal fallback compared by the model it resolves to, and a retirement move that never
// overwrites a model the user chose meanwhile.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { catalogEntry } from "../../core/models/lookup";
import { api, inConversation, newTenant, newTenantWithId, sendSse } from "./helpers";

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));

/** Rewrites the conversation's stored head settings (as a head written long ago), then evicts the object. */
async function rewriteHeadSettings(id: string, settings: Record<string, unknown>): Promise<void> {
  await runInDurableObject(stubOf(id), async (_i, state) => {
    const raw = state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'head'").one().value;
    const head = JSON.parse(raw);
    head.settings = { ...head.settings, ...settings };
    state.storage.sql.exec("UPDATE kv SET value = ? WHERE key = 'head'", JSON.stringify(head));
  });
  await evictDurableObject(stubOf(id));
}

/** A fresh tenant with `tenant` as its settings and one project: the project PATCH's answer and the project id. */
async function tenantAndProject(tenant: Record<string, unknown>, project: Record<string, unknown>) {
  const key = await newTenant();
  const put = await api("PUT", "/v1/settings", { settings: tenant }, { key });
  expect(put.status, put.text).toBe(200);
  const created = await api("POST", "/v1/projects", { name: "p" }, { key });
  expect(created.status).toBe(201);
  const patched = await api("PATCH", `/v1/projects/${created.json.id}`, { settings: project }, { key });
  return { key, projectId: created.json.id, patched };
}

describe("a project's settings are checked as a new conversation gets them", () => {
  it("a project naming a model gives conversations that model's figures: no 400 for the tenant's reserve", async () => {
    const { key, projectId, patched } = await tenantAndProject(
      { outputReserveTokens: 32_000 },
      { model: "offline-20k" },
    );
    expect(patched.status, patched.text).toBe(200);
    const made = await api("POST", "/v1/conversations", { projectId }, { key });
    expect(made.status, made.text).toBe(201);
    expect(made.json.settings).toMatchObject({ model: "offline-20k", contextWindowTokens: 20_000 });
    expect(made.json.settings.outputReserveTokens).toBeLessThan(20_000);
  });

  it("a project naming a model gets its window, as naming the model on the conversation does", async () => {
    const { key, projectId, patched } = await tenantAndProject(
      { contextWindowTokens: 1_000_000 },
      { model: "claude-haiku-4-5" },
    );
    expect(patched.status, patched.text).toBe(200);
    const inProject = await api("POST", "/v1/conversations", { projectId }, { key });
    const direct = await api("POST", "/v1/conversations", { settings: { model: "claude-haiku-4-5" } }, { key });
    expect(inProject.status, inProject.text).toBe(201);
    expect(direct.status, direct.text).toBe(201);
    expect(inProject.json.settings.contextWindowTokens).toBe(200_000);
    expect(inProject.json.settings).toMatchObject({
      model: direct.json.settings.model,
      contextWindowTokens: direct.json.settings.contextWindowTokens,
      outputReserveTokens: direct.json.settings.outputReserveTokens,
      charsPerToken: direct.json.settings.charsPerToken,
    });
  });

  it("a project's own window stays, and what it sets that its model cannot take is a 400 naming the field", async () => {
    const { key, projectId, patched } = await tenantAndProject(
      {},
      { model: "claude-haiku-4-5", contextWindowTokens: 150_000 },
    );
    expect(patched.status, patched.text).toBe(200);
    const made = await api("POST", "/v1/conversations", { projectId }, { key });
    expect(made.json.settings).toMatchObject({ model: "claude-haiku-4-5", contextWindowTokens: 150_000 });
    const refused = await api(
      "PATCH",
      `/v1/projects/${projectId}`,
      { settings: { model: "offline-20k", outputReserveTokens: 30_000 } },
      { key },
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error?.message).toMatch(/^settings\.outputReserveTokens:/);
  });
});

describe("a tenant's own window", () => {
  it("holds on a model a request or a project names, where the model takes it", async () => {
    const key = await newTenant();
    expect((await api("PUT", "/v1/settings", { settings: { contextWindowTokens: 100_000 } }, { key })).status).toBe(
      200,
    );
    const named = await api("POST", "/v1/conversations", { settings: { model: "claude-opus-5" } }, { key });
    expect(named.status).toBe(201);
    expect(named.json.settings.contextWindowTokens).toBe(100_000);
    const project = await api(
      "POST",
      "/v1/projects",
      { name: "capped", settings: { model: "claude-opus-5" } },
      { key },
    );
    expect(project.status).toBe(201);
    const inProject = await api("POST", "/v1/conversations", { projectId: project.json.id }, { key });
    expect(inProject.status).toBe(201);
    expect(inProject.json.settings).toMatchObject({ model: "claude-opus-5", contextWindowTokens: 100_000 });
  });

  it("stays even when it equals a default figure (200,000, 8,192, 1.5), and is cut to what a smaller model takes", async () => {
    const key = await newTenant();
    const own = { contextWindowTokens: 200_000, outputReserveTokens: 8_192, charsPerToken: 1.5 };
    expect((await api("PUT", "/v1/settings", { settings: own }, { key })).status).toBe(200);
    const project = await api("POST", "/v1/projects", { name: "big", settings: { model: "claude-opus-5-5" } }, { key });
    expect(project.status).toBe(201);
    const inProject = await api("POST", "/v1/conversations", { projectId: project.json.id }, { key });
    expect(inProject.status).toBe(201);
    expect(inProject.json.settings).toMatchObject({ model: "claude-opus-5-5", ...own });
    // A window larger than a model takes is cut to the model's own.
    expect((await api("PUT", "/v1/settings", { settings: { contextWindowTokens: 1_000_000 } }, { key })).status).toBe(
      200,
    );
    const small = await api("POST", "/v1/conversations", { settings: { model: "claude-haiku-4-5" } }, { key });
    expect(small.status).toBe(201);
    expect(small.json.settings.contextWindowTokens).toBe(200_000);
  });
});

describe("a rename", () => {
  const retiredHead = {
    model: "claude-sonnet-4-5",
    contextWindowTokens: 200_000,
    outputReserveTokens: 8_192,
    charsPerToken: 1.5,
    thinking: "disabled",
    effort: null,
  };

  it("of a conversation whose model retired is taken, its settings untouched", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "old" })).json.id;
    await rewriteHeadSettings(id, retiredHead);
    const renamed = await api("PATCH", `/v1/conversations/${id}`, { title: "renamed" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).toMatchObject({ title: "renamed", settings: retiredHead });
  });

  it("needs no Models API: a model neither the catalog nor the API knows does not refuse it", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "old" })).json.id;
    await rewriteHeadSettings(id, { model: "claude-never-heard-of-1" });
    const renamed = await api("PATCH", `/v1/conversations/${id}`, { title: "renamed" });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json.title).toBe("renamed");
  });
});

describe("refusalFallbackModel", () => {
  it("is compared to the model by the catalog id it resolves to: an alias of the model is refused", async () => {
    const r = await api("POST", "/v1/conversations", {
      settings: { model: "claude-haiku-4-5", refusalFallbackModel: "claude-haiku-4-5-20251001" },
    });
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toBe("settings.refusalFallbackModel: must be another model than settings.model");
    const id = (await api("POST", "/v1/conversations", { settings: { model: "claude-haiku-4-5" } })).json.id;
    const patched = await api("PATCH", `/v1/conversations/${id}`, {
      settings: { refusalFallbackModel: "claude-haiku-4-5-20251001" },
    });
    expect(patched.status).toBe(400);
  });

  it("an inherited fallback that is the model under an alias is dropped, as the same id is", async () => {
    const { key, tenantId } = await newTenantWithId();
    await env.DB.prepare("UPDATE tenants SET settings = ? WHERE id = ?")
      .bind(JSON.stringify({ refusalFallbackModel: "claude-haiku-4-5-20251001" }), tenantId)
      .run();
    const made = await api("POST", "/v1/conversations", { settings: { model: "claude-haiku-4-5" } }, { key });
    expect(made.status, made.text).toBe(201);
    expect(made.json.settings.refusalFallbackModel).toBeNull();
  });
});

describe("moving a conversation off its retired model", () => {
  it("keeps a model the user chose after the turn read the head", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "race" })).json.id;
    await rewriteHeadSettings(id, { model: "claude-sonnet-4-5", thinking: "auto", effort: null });
    // The user's PATCH lands between the turn's read of the head and its move.
    const chosen = await api("PATCH", `/v1/conversations/${id}`, { settings: { model: "claude-opus-5-5" } });
    expect(chosen.status, chosen.text).toBe(200);
    // As the turn runner moves it: naming the retired model.
    const move = () =>
      inConversation(id, (instance) =>
        instance.record.moveToModel(catalogEntry("claude-sonnet-5-5")!, "claude-sonnet-4-5"),
      );
    expect(await move()).toBe(false);
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-opus-5-5");
    // A model only the Models API knows (not current in the catalog) is kept too.
    await rewriteHeadSettings(id, { model: "claude-experimental-9" });
    await api("GET", `/v1/conversations/${id}`); // the object loads its head again
    expect(await move()).toBe(false);
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-experimental-9");
    // Still on the retired model, it moves.
    await rewriteHeadSettings(id, { model: "claude-sonnet-4-5" });
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-sonnet-4-5");
    expect(await move()).toBe(true);
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-sonnet-5-5");
  });

  it("announces no model_changed for a move a PATCH meanwhile made moot", async () => {
    const id = (await api("POST", "/v1/conversations", { title: "moot" })).json.id;
    await rewriteHeadSettings(id, { model: "claude-sonnet-4-5", thinking: "auto", effort: null });
    // The user's model lands in the head just before the turn's move is written.
    await inConversation(id, (instance) => {
      const record = instance.record;
      const move = record.moveToModel.bind(record);
      record.moveToModel = async (entry, retired) => {
        await record.updateHead((h) => ({
          next: { ...h, settings: { ...h.settings, model: "claude-haiku-4-5" } },
          result: undefined,
        }));
        return move(entry, retired);
      };
    });
    const events = await sendSse(id, "hello");
    expect(events.find((e) => e.type === "turn_end")).toBeDefined();
    expect((await api("GET", `/v1/conversations/${id}`)).json.settings.model).toBe("claude-haiku-4-5");
    expect(events.filter((e) => e.type === "model_changed")).toEqual([]);
    const cards = (await api("GET", `/v1/conversations/${id}/timeline`)).json.data;
    expect(cards.filter((c) => c.type === "model_changed")).toEqual([]);
  });
});
