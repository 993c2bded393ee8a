// A reply a regenerate replaced stays in the index (nothing is removed), but a search never shows it
// as if it stood: GET /v1/search marks its hits `superseded: true` with `supersededBy` (as the
// transcript does), and memory_search tells the model it was replaced, so the model does not quote
// an answer the person threw away. The mark is read at search time from the conversation's record,
// so rows indexed before the regenerate (every superseded row: the regenerate comes later) carry it.
import { describe, expect, it } from "vitest";
import { ofType, resultText } from "../blocks";
import { api, createConversation, eventually, newTenant, send, turnMessages } from "./helpers";

const toolResultText = (r: Parameters<typeof turnMessages>[0]) =>
  resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));

const searchHits = async (q: string, key: string) =>
  (await api("GET", `/v1/search?q=${encodeURIComponent(q)}&said=assistant&limit=20`, undefined, { key })).json.data;

describe("search and a regenerated reply", () => {
  it("marks the superseded exchange's hits in GET /v1/search and memory_search; the live ones stay unmarked", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const first = await send(id, "Which glacier is wombatrix?", key);
    expect(first.status).toBe(200);
    const [prompt, reply] = first.json.messages;
    // Indexed before the regenerate: the superseded mark comes after the row.
    await eventually(async () => (await searchHits("wombatrix", key)).some((h) => h.id === reply.id));

    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { key });
    expect(again.status).toBe(200);
    const [copy, fresh] = again.json.messages;
    expect(again.json.superseded?.messageIds).toEqual([prompt.id, reply.id]);

    const hits = await eventually(async () => {
      const found = await searchHits("wombatrix", key);
      return found.some((h) => h.id === fresh.id) ? found : null;
    });
    const old = hits.find((h) => h.id === reply.id);
    const oldPrompt = hits.find((h) => h.id === prompt.id);
    // Still found (nothing is removed), but marked as the transcript marks it.
    expect(old).toMatchObject({ superseded: true, supersededBy: copy.id, role: "assistant" });
    expect(oldPrompt).toMatchObject({ superseded: true, supersededBy: copy.id });
    for (const live of hits.filter((h) => h.id === fresh.id || h.id === copy.id)) {
      expect(live.superseded).toBeUndefined();
      expect(live.supersededBy).toBeUndefined();
    }

    // The model's own search, from another conversation of the tenant: the replaced reply's line says so.
    const other = await createConversation(undefined, key);
    const text = toolResultText(
      await send(other, '@tool memory_search {"query":"\\u0077ombatrix","said":"assistant","limit":10}', key),
    );
    const lineOf = (seq: number) => text.split("\n").find((l) => l.includes(`conversation ${id}, seq ${seq} (`));
    expect(lineOf(reply.seq)).toContain("(replaced by a regenerated reply)");
    expect(lineOf(prompt.seq)).toContain("(replaced by a regenerated reply)");
    expect(lineOf(fresh.seq)).toBeDefined();
    expect(lineOf(fresh.seq)).not.toContain("replaced");

    // The call it names to read the original back says it was superseded.
    const read = toolResultText(
      await send(other, `@tool conversation_read {"conversation_id":"${id}","message_id":"${reply.id}"}`, key),
    );
    expect(read).toContain(`superseded by ${copy.id}`);
  });
});
