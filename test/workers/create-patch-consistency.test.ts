// Create and PATCH agree: a title given at create is the user's (never replaced by the automatic
// one, even "New conversation"); a model change by PATCH moves the inherited-looking settings it
// does not name as create does; and no window is accepted that leaves no room for the fixed prompt.
import { describe, expect, it } from "vitest";
import { DEFAULT_TITLE } from "../../core/title";
import { env } from "cloudflare:workers";
import { setTenantSettings } from "../../services/default-settings";
import { api, inConversation, newTenant, newTenantWithId, send } from "./helpers";

const eventually = async <T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe("a title given at create", () => {
  it('keeps "New conversation" given at POST: the automatic title does not replace it', async () => {
    const key = await newTenant();
    const made = await api("POST", "/v1/conversations", { title: DEFAULT_TITLE }, { key });
    expect(made.status).toBe(201);
    const id = made.json.id;
    expect(await inConversation(id, async (o) => o.store.titleSource())).toBe("user");
    expect((await send(id, "Plan a trip to Lisbon", key)).status).toBe(200);
    // Long enough for the automatic title to land, were it tried.
    await new Promise((r) => setTimeout(r, 500));
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title).toBe(DEFAULT_TITLE);
  });

  it("leaves a conversation created without a title to the automatic title", async () => {
    const key = await newTenant();
    const made = await api("POST", "/v1/conversations", {}, { key });
    const id = made.json.id;
    expect(await inConversation(id, async (o) => o.store.titleSource())).toBeNull();
    expect((await send(id, "Plan a trip to Lisbon", key)).status).toBe(200);
    const title = await eventually(
      async () => (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title,
      (t) => t !== DEFAULT_TITLE,
    );
    expect(title).toBe("Plan a trip to Lisbon");
  });
});

describe("a model change by PATCH, as create makes it", () => {
  it("drops an inherited fallback that is the new model", async () => {
    const key = await newTenant();
    const put = await api("PUT", "/v1/settings", { settings: { refusalFallbackModel: "claude-opus-5" } }, { key });
    expect(put.status).toBe(200);
    const created = await api("POST", "/v1/conversations", { settings: { model: "claude-opus-5" } }, { key });
    expect(created.status).toBe(201);
    expect(created.json.settings.refusalFallbackModel).toBeNull();
    const plain = await api("POST", "/v1/conversations", {}, { key });
    expect(plain.json.settings.refusalFallbackModel).toBe("claude-opus-5");
    const patched = await api(
      "PATCH",
      `/v1/conversations/${plain.json.id}`,
      { settings: { model: "claude-opus-5" } },
      { key },
    );
    expect(patched.status).toBe(200);
    expect(patched.json.settings).toMatchObject({ model: "claude-opus-5", refusalFallbackModel: null });
  });

  it("still refuses a fallback the PATCH itself names as the new model", async () => {
    const key = await newTenant();
    const plain = await api("POST", "/v1/conversations", {}, { key });
    const patched = await api(
      "PATCH",
      `/v1/conversations/${plain.json.id}`,
      { settings: { model: "claude-opus-5", refusalFallbackModel: "claude-opus-5" } },
      { key },
    );
    expect(patched.status).toBe(400);
    expect(patched.json.error?.message).toMatch(/settings\.refusalFallbackModel/);
  });

  it("gives the new model's reserve when the new window cannot hold the one the conversation had", async () => {
    const key = await newTenant();
    expect((await api("PUT", "/v1/settings", { settings: { outputReserveTokens: 64_000 } }, { key })).status).toBe(200);
    const created = await api("POST", "/v1/conversations", { settings: { model: "offline-50k" } }, { key });
    expect(created.status).toBe(201);
    expect(created.json.settings).toMatchObject({ contextWindowTokens: 50_000, outputReserveTokens: 12_500 });
    const plain = await api("POST", "/v1/conversations", {}, { key });
    expect(plain.json.settings.outputReserveTokens).toBe(64_000);
    const patched = await api(
      "PATCH",
      `/v1/conversations/${plain.json.id}`,
      { settings: { model: "offline-50k" } },
      { key },
    );
    expect(patched.status).toBe(200);
    expect(patched.json.settings).toMatchObject({
      model: "offline-50k",
      contextWindowTokens: 50_000,
      outputReserveTokens: 12_500,
    });
    // Named in the PATCH itself: the user's own, checked as before.
    const own = await api(
      "PATCH",
      `/v1/conversations/${plain.json.id}`,
      { settings: { model: "offline-60k", outputReserveTokens: 64_000 } },
      { key },
    );
    expect(own.status).toBe(400);
    expect(own.json.error?.message).toMatch(/settings\.outputReserveTokens/);
  });
});

describe("a window with room for the fixed prompt", () => {
  it("refuses a window below the floor, or one the reserve leaves too little of, everywhere settings are set", async () => {
    const key = await newTenant();
    const tiny = { contextWindowTokens: 1_500, outputReserveTokens: 64 };
    const cramped = { contextWindowTokens: 5_000, outputReserveTokens: 2_500 };
    const project = await api("POST", "/v1/projects", { name: "p" }, { key });
    expect(project.status).toBe(201);
    const conv = await api("POST", "/v1/conversations", {}, { key });
    for (const settings of [tiny, cramped]) {
      const answers = [
        await api("PUT", "/v1/settings", { settings }, { key }),
        await api("POST", "/v1/projects", { name: "q", settings }, { key }),
        await api("PATCH", `/v1/projects/${project.json.id}`, { settings }, { key }),
        await api("POST", "/v1/conversations", { settings }, { key }),
        await api("PATCH", `/v1/conversations/${conv.json.id}`, { settings }, { key }),
      ];
      for (const a of answers) {
        expect(a.status).toBe(400);
        expect(a.json.error?.message).toMatch(/contextWindowTokens/);
      }
    }
    // The smallest accepted: the floor, with room for the prompt beside the reserve.
    const least = await api(
      "POST",
      "/v1/conversations",
      { settings: { contextWindowTokens: 4_000, outputReserveTokens: 1_000 } },
      { key },
    );
    expect(least.status).toBe(201);
  });
});

describe("stored settings from before the floor", () => {
  it("leave out a stored window below the floor alone: the tenant's other settings still hold", async () => {
    const { tenantId, key } = await newTenantWithId();
    // As PUT /v1/settings stored it when 1,000 tokens was the least window.
    await setTenantSettings(env.DB, tenantId, {
      contextWindowTokens: 1_500,
      outputReserveTokens: 64,
      serverTools: ["web_search"],
    });
    const got = await api("GET", "/v1/settings", undefined, { key });
    expect(got.status).toBe(200);
    expect(got.json.settings).toEqual({ outputReserveTokens: 64, serverTools: ["web_search"] });
    const made = await api("POST", "/v1/conversations", {}, { key });
    expect(made.status).toBe(201);
    expect(made.json.settings).toMatchObject({ contextWindowTokens: 1_000_000, outputReserveTokens: 64 });
    expect(made.json.settings.serverTools).toEqual(["web_search"]);
  });
});
