// An automation's `name` follows the visible-name rule of titles and project names (at most 100
// characters): no NUL, newlines, line separators or bidi overrides, something visible; on create
// and on PATCH, a 400 naming `name` with nothing written.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";
import { postAutomation } from "./automation-helpers";

const BAD = ["a\u0000b", "line one\nline two", "evil\u202Etxt.exe", "a\u2028b", "\u200B", "\u2066x\u2069"];

describe("automation name rule", () => {
  it("refuses hidden and control characters on create", async () => {
    const key = await newTenant();
    for (const name of BAD) {
      const r = await postAutomation(key, { name, paused: true });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.json.error?.message).toMatch(/^name: /);
    }
    expect((await postAutomation(key, { name: "x".repeat(101), paused: true })).status).toBe(400);
    expect((await api("GET", "/v1/automations", undefined, { key })).json.data).toEqual([]);
  });

  it("refuses them on PATCH and keeps the name; a plain name of 100 passes", async () => {
    const key = await newTenant();
    const made = await postAutomation(key, { name: `  ${"n".repeat(100)}  `, paused: true });
    expect(made.status).toBe(201);
    expect(made.json.name).toBe("n".repeat(100));
    const id = made.json.id as string;
    for (const name of BAD) {
      const r = await api("PATCH", `/v1/automations/${id}`, { name }, { key });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(r.json.error?.message).toMatch(/^name: /);
    }
    const ok = await api("PATCH", `/v1/automations/${id}`, { name: "daily 🌅 digest" }, { key });
    expect(ok.status).toBe(200);
    expect((await api("GET", `/v1/automations/${id}`, undefined, { key })).json.name).toBe("daily 🌅 digest");
    expect((await api("DELETE", `/v1/automations/${id}`, undefined, { key })).status).toBe(204);
  });
});
