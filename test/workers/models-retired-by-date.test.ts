// A deprecated model past its retiresOn day is listed as retired models are (docs/api-notes.md
// "Models"): {id, aliases, name, status: "retired", retiredOn, replacement, sources}, retiredOn its
// retiresOn day, in the list and by id (or alias).
import { describe, expect, it } from "vitest";
import { MODELS } from "../../core/models/catalog";
import { utcDay } from "../../core/models/lookup";
import { api } from "./helpers";

const PREVIEW = MODELS.find((m) => m.id === "claude-mythos-preview")!;

describe("a deprecated model past its retirement day", () => {
  it("has the retired shape in the list, with retiredOn its retiresOn", async () => {
    expect(PREVIEW.retiresOn! <= utcDay()).toBe(true);
    const list = (await api("GET", "/v1/models?status=retired")).json.data as Record<string, unknown>[];
    const preview = list.find((m) => m.id === PREVIEW.id)!;
    const sonnet45 = list.find((m) => m.id === "claude-sonnet-4-5")!;
    expect(preview).toEqual({
      id: PREVIEW.id,
      aliases: PREVIEW.aliases,
      name: PREVIEW.name,
      line: null,
      default: false,
      status: "retired",
      retiredOn: PREVIEW.retiresOn,
      replacement: "claude-mythos-5-2",
      contextWindowTokens: null,
      maxOutputTokens: null,
      prices: null,
      sources: PREVIEW.sources,
    });
    expect(Object.keys(preview)).toEqual(Object.keys(sonnet45));
  });

  it("has it by id too", async () => {
    const one = await api("GET", `/v1/models/${PREVIEW.id}`);
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ id: PREVIEW.id, status: "retired", retiredOn: PREVIEW.retiresOn });
    expect(one.json).not.toHaveProperty("retiresOn");
    expect(one.json).not.toHaveProperty("thinking");
  });

  it("a deprecated model before its day keeps the full shape", async () => {
    const list = (await api("GET", "/v1/models")).json.data as Record<string, unknown>[];
    for (const m of list.filter((x) => x.status !== "retired")) {
      expect(m).toHaveProperty("retiresOn");
      expect(m).not.toHaveProperty("retiredOn");
    }
  });
});
