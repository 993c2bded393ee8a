// memory_update with only a note's id changes nothing: it is an error naming the fields it takes,
// and the note's updatedAt stays (a moved updatedAt would mark the note edited, so a refused turn's
// or a regenerated exchange's note would survive forgetNotes).
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant, send } from "./helpers";

describe("memory_update with no field to change", () => {
  it("is an error naming its fields and leaves the note untouched", async () => {
    const key = await newTenant();
    const note = (await api("POST", "/v1/memory", { text: "untouched note kestrel-4" }, { key })).json;
    const before = (await api("GET", `/v1/memory/${note.id}`, undefined, { key })).json;
    const id = await createConversation(undefined, key);
    const r = await send(
      id,
      `@tool tool_activate {"name":"memory_update"}\n@tool memory_update {"id":"${note.id}"}`,
      key,
    );
    const [, upd] = r.json.messages[2].content;
    expect(upd.is_error).toBe(true);
    expect(upd.content).toMatch(/text/);
    expect(upd.content).toMatch(/title/);
    expect(upd.content).toMatch(/tags/);
    const after = (await api("GET", `/v1/memory/${note.id}`, undefined, { key })).json;
    expect(after.updatedAt).toBe(before.updatedAt);
    expect(after.updatedAt).toBe(after.createdAt);
    expect(after.text).toBe("untouched note kestrel-4");
  });
});
