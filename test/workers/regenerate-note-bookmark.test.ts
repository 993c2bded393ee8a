// A regenerate deletes the notes memory_save kept in the exchange it replaces (regenerate.ts
// forgetExchangeNotes), and those deletes are shard writes: they move the conversation's read
// bookmark as a note tool's do, so the regenerated turn's memory_search starts its session past
// them and cannot find the note just deleted.
import { describe, expect, it } from "vitest";
import { api, eventually, send } from "./helpers";
import { latest, spiedConversation } from "./shard-spy";

describe("a regenerate's note deletes", () => {
  it("move the conversation's read bookmark: the regenerated turn's memory_search starts past them", async () => {
    const { key, id, spy } = await spiedConversation();
    const first = await send(
      id,
      '@tools-per-step 1\n@tool memory_search {"query":"quasarzebra"}\n@tool memory_save {"title":"pin","text":"the vault pin is quasarzebra"}',
      key,
    );
    expect(first.status).toBe(200);
    expect(JSON.stringify(first.json.messages)).toMatch(/saved note mem_/);
    // The turn's messages indexed: the object's read bookmark is where that write left it.
    await eventually(async () => spy.log.some((s) => "written" in s) || null);
    const notes = async () => (await api("GET", "/v1/memory", undefined, { key })).json.data as { id: string }[];
    const [note] = await notes();

    const from = spy.log.length;
    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { key });
    expect(again.status).toBe(200);
    // The replaced exchange's note went, and the regenerated turn saved its own.
    expect((await notes()).map((n) => n.id)).not.toContain(note.id);
    const steps = spy.log.slice(from);
    // The delete's writes come first (before the copy's first model request); the search's session next.
    const firstWrite = steps.findIndex((s) => "written" in s);
    expect(firstWrite).toBeGreaterThan(-1);
    const search = steps.findIndex((s, i) => i > firstWrite && "session" in s && s.session !== "first-primary");
    expect(search).toBeGreaterThan(-1);
    const start = (steps[search] as { session: string }).session;
    const deleted = latest(steps.slice(0, search).flatMap((s) => ("written" in s ? [s.written] : [])));
    expect(start).not.toBe("first-unconstrained");
    expect(start >= deleted, `search from ${start}, the delete wrote ${deleted}`).toBe(true);
  });
});
