// Which model answers: Anthropic with a key, the offline model only under local dev or when
// MODEL_PROVIDER=offline says so, and otherwise a clear "not configured" naming the secret.
import { describe, expect, it } from "vitest";
import { EnvConfigError } from "../../core/env-config";
import { createModelClient, OFFLINE_BASE_URL } from "../../core/model-client";
import { chooseModel, ModelNotConfiguredError, modelProblem, type ModelEnv } from "../../core/model-provider";

const provider = (env: ModelEnv) => {
  const choice = chooseModel(env);
  return choice.ok ? choice.provider : "refused";
};

describe("the model provider choice", () => {
  it("refuses a deployed worker with no key, naming the missing secret", () => {
    for (const env of [{}, { DEV_BOOTSTRAP: "false" }, { ANTHROPIC_API_KEY: "" }, { ANTHROPIC_API_KEY: "   " }]) {
      expect(provider(env)).toBe("refused");
      expect(modelProblem(env)).toMatch(/ANTHROPIC_API_KEY/);
    }
  });

  it("uses the offline model under local dev, or when MODEL_PROVIDER=offline says so", () => {
    expect(provider({ DEV_BOOTSTRAP: "true" })).toBe("offline");
    expect(provider({ MODEL_PROVIDER: "offline" })).toBe("offline");
    expect(provider({ MODEL_PROVIDER: "offline", ANTHROPIC_API_KEY: "sk-ant-x" })).toBe("offline");
  });

  it("uses Anthropic whenever a key is set (local dev included) and passes the key and base URL", () => {
    expect(chooseModel({ ANTHROPIC_API_KEY: "sk-ant-x", ANTHROPIC_BASE_URL: "https://proxy.example" })).toEqual({
      ok: true,
      provider: "anthropic",
      apiKey: "sk-ant-x",
      baseURL: "https://proxy.example",
    });
    expect(provider({ ANTHROPIC_API_KEY: "sk-ant-x", DEV_BOOTSTRAP: "true" })).toBe("anthropic");
    expect(provider({ ANTHROPIC_API_KEY: "sk-ant-x", MODEL_PROVIDER: "anthropic" })).toBe("anthropic");
  });

  it("MODEL_PROVIDER=anthropic needs the key even under local dev; an unknown provider is refused by name", () => {
    expect(provider({ MODEL_PROVIDER: "anthropic", DEV_BOOTSTRAP: "true" })).toBe("refused");
    expect(modelProblem({ MODEL_PROVIDER: "anthropic", DEV_BOOTSTRAP: "true" })).toMatch(/ANTHROPIC_API_KEY/);
    expect(() => chooseModel({ MODEL_PROVIDER: "openai", ANTHROPIC_API_KEY: "sk-ant-x" })).toThrow(EnvConfigError);
    expect(() => modelProblem({ MODEL_PROVIDER: "openai" })).toThrow(
      /MODEL_PROVIDER must be "anthropic" or "offline", got "openai"/,
    );
  });

  it("a DEV_BOOTSTRAP other than true or false is refused by name, never read as off", () => {
    expect(() => chooseModel({ DEV_BOOTSTRAP: "1" })).toThrow(/DEV_BOOTSTRAP must be "true" or "false", got "1"/);
  });

  it("a production build without the offline model refuses MODEL_PROVIDER=offline and local dev's fallback, by name", () => {
    for (const env of [{ MODEL_PROVIDER: "offline" }, { DEV_BOOTSTRAP: "true" }]) {
      const choice = chooseModel(env, false);
      expect(choice.ok).toBe(false);
      if (!choice.ok) expect(choice.message).toMatch(/OFFLINE_MODEL_BUNDLED=false/);
      expect(chooseModel(env, true)).toEqual({ ok: true, provider: "offline" });
    }
    expect(chooseModel({ ANTHROPIC_API_KEY: "sk-x", DEV_BOOTSTRAP: "true" }, false)).toMatchObject({
      ok: true,
      provider: "anthropic",
    });
  });

  it("createModelClient throws a 503 model_not_configured error instead of building a stand-in", () => {
    let thrown: unknown;
    try {
      createModelClient({});
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ModelNotConfiguredError);
    expect(thrown).toMatchObject({
      type: "model_not_configured",
      status: 503,
      message: expect.stringMatching(/ANTHROPIC_API_KEY/),
    });
    expect(createModelClient({ DEV_BOOTSTRAP: "true" }).baseURL).toBe(OFFLINE_BASE_URL);
    expect(createModelClient({ ANTHROPIC_API_KEY: "sk-ant-x", DEV_BOOTSTRAP: "true" }).baseURL).not.toBe(
      OFFLINE_BASE_URL,
    );
  });
});
