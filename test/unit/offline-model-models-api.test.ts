// The Models API of the offline model through the SDK: pages, lifecycle filter, ModelInfo shape,
// retired models on request only, test models, 404 for an unknown id; and the Messages API's 404
// for retired and unknown models.
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { MODELS } from "../../core/models/catalog";
import { ask, makeClient, rejection } from "./offline-model-client";

const DAY = Date.UTC(2026, 11, 3);
const client = makeClient({ now: () => DAY });

describe("Models API", () => {
  it("lists active and deprecated models newest first, paged, with the SDK's ModelInfo shape", async () => {
    const first = await client.models.list({ limit: 5 });
    expect(first.data).toHaveLength(5);
    expect(first.has_more).toBe(true);
    expect(first.first_id).toBe(first.data[0].id);
    expect(first.last_id).toBe(first.data[4].id);
    const all: Anthropic.ModelInfo[] = [];
    for await (const model of client.models.list({ limit: 5 })) all.push(model);
    const dates = all.map((m) => m.created_at);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(new Set(all.map((m) => m.lifecycle))).toEqual(new Set(["active", "deprecated"]));
    const ids = all.map((m) => m.id);
    for (const entry of MODELS.filter((m) => !m.retiresOn || m.retiresOn > "2026-12-03"))
      expect(ids).toContain(entry.id);
    expect(ids).not.toContain("claude-mythos-preview"); // deprecated, past its retirement day
    expect(ids).toContain("offline-20k");
    const sonnet = all.find((m) => m.id === "claude-sonnet-5-5")!;
    expect(sonnet).toMatchObject({
      type: "model",
      display_name: "Claude Sonnet 5.5",
      lifecycle: "active",
      line: "sonnet",
      max_input_tokens: 1_000_000,
      max_tokens: 128_000,
      deprecated_at: null,
      retires_at: null,
    });
    expect(sonnet.capabilities?.thinking.types).toEqual({
      adaptive: { supported: true },
      between_tools: { supported: true },
      disabled: { supported: false },
      enabled: { supported: false },
    });
    expect(sonnet.capabilities?.effort).toMatchObject({
      supported: true,
      xhigh: { supported: true },
      max: { supported: true },
    });
    expect(sonnet.capabilities?.server_tools.web_search).toEqual({ supported: true });
    const opus45 = all.find((m) => m.id === "claude-opus-4-5")!;
    expect(opus45).toMatchObject({
      lifecycle: "deprecated",
      deprecated_at: "2026-11-23T00:00:00Z",
      retires_at: "2027-01-22T00:00:00Z",
    });
    expect(opus45.capabilities?.effort).toMatchObject({ high: { supported: true }, xhigh: { supported: false } });
  });

  it("lists retired models only when asked, and retrieves them by id", async () => {
    const retired = await client.models.list({ lifecycle: ["retired"], limit: 100 });
    const ids = retired.data.map((m) => m.id);
    expect(ids).toContain("claude-sonnet-4-5");
    expect(ids).toContain("claude-mythos-preview");
    expect(retired.data.every((m) => m.lifecycle === "retired" && m.capabilities === null)).toBe(true);
    expect(await client.models.retrieve("claude-sonnet-4-5-20250929")).toMatchObject({
      id: "claude-sonnet-4-5",
      lifecycle: "retired",
      retires_at: "2026-11-30T00:00:00Z",
    });
    expect(await client.models.retrieve("claude-haiku-4-5-20251001")).toMatchObject({
      id: "claude-haiku-4-5",
      lifecycle: "active",
      max_tokens: 64_000,
    });
  });

  it("retrieves any test model offline-<N>k, and 404s an unknown id", async () => {
    expect(await client.models.retrieve("offline-37k")).toMatchObject({
      id: "offline-37k",
      max_input_tokens: 37_000,
      max_tokens: 128_000,
      lifecycle: "active",
    });
    const missing = await rejection(client.models.retrieve("claude-nonexistent-9"));
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.error).toMatchObject({
      type: "error",
      error: { type: "not_found_error", message: "model: claude-nonexistent-9" },
    });
    expect((await rejection(client.models.retrieve("offline-2001k"))).status).toBe(404);
  });

  it("refuses a bad lifecycle or limit", async () => {
    expect((await rejection(client.models.list({ limit: 1001 }))).status).toBe(400);
    expect((await rejection(client.models.list({ lifecycle: ["gone" as "retired"] }))).status).toBe(400);
  });
});

describe("models on the Messages API", () => {
  it("answers a retired or unknown model with 404 `model: <id>`, with x-should-retry false", async () => {
    for (const model of ["claude-sonnet-4-5", "claude-3-opus-20240229", "offline", "claude-mythos-preview"]) {
      const error = await rejection(client.messages.create(ask("Hello.", { model })));
      expect(error).toBeInstanceOf(Anthropic.NotFoundError);
      expect(error.error).toMatchObject({
        type: "error",
        error: { type: "not_found_error", message: `model: ${model}` },
        request_id: expect.stringMatching(/^req_/),
      });
      expect(error.headers?.get("x-should-retry")).toBe("false");
      expect(error.requestID).toMatch(/^req_/);
    }
  });

  it("retires a deprecated model on its retirement day", async () => {
    const before = makeClient({ now: () => Date.UTC(2027, 0, 21) });
    const after = makeClient({ now: () => Date.UTC(2027, 0, 22) });
    expect((await before.messages.create(ask("Hello.", { model: "claude-opus-4-5" }))).type).toBe("message");
    expect((await rejection(after.messages.create(ask("Hello.", { model: "claude-opus-4-5" })))).status).toBe(404);
  });
});
