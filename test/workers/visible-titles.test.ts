// A conversation's title follows the rule a project's name does (workers/chat/validate.ts
// visibleName), on create and on PATCH: something visible, no control characters, line separators
// or bidi overrides. An import's ?title= follows the same rule.
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

const REFUSED = [
  "\u200b",
  "\u202e",
  "\u2066\u2069",
  "\u0000",
  "a\u0000b",
  "line1\nline2",
  "tab\there",
  "a\u2028b",
  "x\u202ey",
];
const KEPT = ["Plans for Q3", "  trimmed  ", "日本語のタイトル", "😀 launch", "a\u200bb", "١٢٣"];

describe("conversation titles", () => {
  it("refuses a title with nothing visible or with control, separator or bidi characters, on create and on PATCH, as a project's name", async () => {
    const key = await newTenant();
    const id = (await api("POST", "/v1/conversations", { title: "before" }, { key })).json.id;
    for (const title of REFUSED) {
      const created = await api("POST", "/v1/conversations", { title }, { key });
      expect(created.status, JSON.stringify(title)).toBe(400);
      expect(created.json.error?.message, JSON.stringify(title)).toMatch(/^title: /);
      const patched = await api("PATCH", `/v1/conversations/${id}`, { title }, { key });
      expect(patched.status, JSON.stringify(title)).toBe(400);
      expect(patched.json.error?.message, JSON.stringify(title)).toMatch(/^title: /);
      // One rule: a project's name is refused for the same titles.
      expect((await api("POST", "/v1/projects", { name: title }, { key })).status, JSON.stringify(title)).toBe(400);
    }
    expect((await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title).toBe("before");
    for (const title of KEPT) {
      const created = await api("POST", "/v1/conversations", { title }, { key });
      expect(created.status, JSON.stringify(title)).toBe(201);
      expect(created.json.title).toBe(title.trim());
      const patched = await api("PATCH", `/v1/conversations/${id}`, { title }, { key });
      expect(patched.status, JSON.stringify(title)).toBe(200);
      expect((await api("POST", "/v1/projects", { name: title }, { key })).status, JSON.stringify(title)).toBe(201);
    }
  });

  it("holds an import's ?title= to the same rule (a title with a newline is refused)", async () => {
    const key = await newTenant();
    const body = JSON.stringify({ model: "claude", max_tokens: 100, messages: [{ role: "user", content: "hello" }] });
    const title = encodeURIComponent("imported\ntitle");
    const r = await api("POST", `/v1/conversations/import?title=${title}`, body, {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error?.message).toMatch(/^title: /);
  });
});
