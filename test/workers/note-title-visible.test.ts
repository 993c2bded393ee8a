// A note's title follows the rule of project names and conversation titles (workers/chat/validate.ts
// visibleName): something visible, no control characters, line separators or bidi overrides.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

describe("a note's title", () => {
  it("with no visible character is refused on POST and PATCH, naming title", async () => {
    const key = await newTenant();
    for (const title of ["\u200b", "\u202e\u200b", "a\u202eb", "line\nbreak"]) {
      const created = await api("POST", "/v1/memory", { text: "t", title }, { key });
      expect(created.status).toBe(400);
      expect(created.json.error?.message).toMatch(/title/);
    }
    const note = await api("POST", "/v1/memory", { text: "t", title: "  Seats  " }, { key });
    expect(note.status).toBe(201);
    expect(note.json.title).toBe("Seats");
    const patched = await api("PATCH", `/v1/memory/${note.json.id}`, { title: "\u200b" }, { key });
    expect(patched.status).toBe(400);
    expect(patched.json.error?.message).toMatch(/title/);
    expect((await api("GET", `/v1/memory/${note.json.id}`, undefined, { key })).json.title).toBe("Seats");
    const renamed = await api("PATCH", `/v1/memory/${note.json.id}`, { title: "Window seats" }, { key });
    expect(renamed.status).toBe(200);
    expect(renamed.json.title).toBe("Window seats");
  });
});
