// A note's tags follow its title's character rule (visibleName: something visible, no control
// characters, line separators or bidi overrides) and are refused when one repeats: on POST and
// PATCH /v1/memory with a 400 naming the field, and in memory_save and memory_update with an error.
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant, send } from "./helpers";

const BAD: unknown[][] = [["dup", "dup"], ["a\u0000b"], ["c\nd"], ["\u202eevil"], ["\u200b"], ["x", " x "]];

describe("a note's tags", () => {
  it("are refused on POST /v1/memory when hidden, control or repeated", async () => {
    const key = await newTenant();
    const all = await api(
      "POST",
      "/v1/memory",
      { text: "t", tags: ["dup", "dup", "a\u0000b", "c\nd", "\u202eevil"] },
      { key },
    );
    expect(all.status).toBe(400);
    expect(all.text).toMatch(/tags/);
    for (const tags of BAD) {
      const r = await api("POST", "/v1/memory", { text: "t", tags }, { key });
      expect(r.status, JSON.stringify(tags)).toBe(400);
      expect(r.text).toMatch(/tags/);
    }
    expect((await api("GET", "/v1/memory", undefined, { key })).json.data).toEqual([]);
    const ok = await api("POST", "/v1/memory", { text: "t", tags: [" node.js ", "c++", "Dup"] }, { key });
    expect(ok.status).toBe(201);
    expect(ok.json.tags).toEqual(["node.js", "c++", "Dup"]);
  });

  it("are refused on PATCH /v1/memory/:id alike, and the note keeps its tags", async () => {
    const key = await newTenant();
    const note = (await api("POST", "/v1/memory", { text: "t", tags: ["kept"] }, { key })).json;
    for (const tags of BAD) {
      const r = await api("PATCH", `/v1/memory/${note.id}`, { tags }, { key });
      expect(r.status, JSON.stringify(tags)).toBe(400);
      expect(r.text).toMatch(/tags/);
    }
    expect((await api("GET", `/v1/memory/${note.id}`, undefined, { key })).json.tags).toEqual(["kept"]);
  });

  it("are refused by memory_save and memory_update with an error", async () => {
    const key = await newTenant();
    const note = (await api("POST", "/v1/memory", { text: "t", tags: ["kept"] }, { key })).json;
    const id = await createConversation(undefined, key);
    const save = await send(id, `@tool memory_save ${JSON.stringify({ text: "s", tags: ["dup", "dup"] })}`, key);
    const [saved] = save.json.messages[2].content;
    expect(saved.is_error).toBe(true);
    expect(JSON.stringify(saved.content)).toMatch(/tags/);
    const hidden = await send(id, `@tool memory_save ${JSON.stringify({ text: "s", tags: ["\u202eevil"] })}`, key);
    const [hiddenResult] = hidden.json.messages[2].content;
    expect(hiddenResult.is_error).toBe(true);
    const upd = await send(
      id,
      `@tool tool_activate {"name":"memory_update"}\n@tool memory_update ${JSON.stringify({ id: note.id, tags: ["c\nd"] })}`,
      key,
    );
    const [, updated] = upd.json.messages[2].content;
    expect(updated.is_error).toBe(true);
    expect(JSON.stringify(updated.content)).toMatch(/tags/);
    expect(
      (await api("GET", "/v1/memory", undefined, { key })).json.data.map((n: { tags: string[] }) => n.tags),
    ).toEqual([["kept"]]);
  });
});
