// memory_get pages every kind it reads (a note, an episode, a message) by `offset`, as
// conversation_read does: an episode's body may be up to 100,000 characters, and a tool result that
// reads a stored thing is bounded (tool-result-bounds.test.ts); each page names the call for the next.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { READ_PAGE_CHARS } from "../../agent/tools/conversation-read";
import { recordEpisode } from "../../services/memory/notes";
import { api, createConversation, newTenantWithId, send, turnMessages } from "./helpers";
import { ofType, resultText } from "../blocks";

const toolResult = (r: { text: string }) => resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));
/** The `memory_get {...}` a page names for the next one, parsed. */
const nextOf = (out: string) => {
  const m = /next page: memory_get (\{[^}]*\})/.exec(out.slice(0, out.indexOf("\n")));
  return m ? (JSON.parse(m[1]) as { id: string; offset: number }) : null;
};
const bodyOf = (out: string) => out.slice(out.indexOf("\n") + 1);

describe("memory_get paging", { timeout: 120_000 }, () => {
  it("pages a long episode by offset, each page naming the call for the next", async () => {
    const { tenantId, key } = await newTenantWithId();
    const id = await createConversation(undefined, key);
    const summary = "Summary sentence about the quarterly kumquat review. ".repeat(1900);
    await recordEpisode(env, {
      tenantId,
      conversationId: id,
      foldJobId: `fold_${crypto.randomUUID()}`,
      throughSeq: 2,
      summary,
      at: new Date().toISOString(),
    });
    const listed = await api("GET", `/v1/memory/episodes?conversation=${id}`, undefined, { key });
    const epi: string = listed.json.data[0].id;

    const first = toolResult(await send(id, `@tool memory_get {"id":"${epi}"}`, key));
    expect(first.length).toBeLessThan(READ_PAGE_CHARS + 1_000);
    expect(first.split("\n")[0]).toContain(`episode ${epi} of conversation ${id}`);
    expect(nextOf(first)).toEqual({ id: epi, offset: READ_PAGE_CHARS });

    const late = toolResult(await send(id, `@tool memory_get {"id":"${epi}","offset":90000}`, key));
    expect(late).not.toBe(first);
    expect(bodyOf(late) === summary.slice(90_000)).toBe(true);
    expect(nextOf(late)).toBeNull();

    // Walking the named calls reads the body whole, once.
    let read = bodyOf(first);
    for (let next = nextOf(first), i = 0; next && i < 5; i++) {
      const out = toolResult(await send(id, `@tool memory_get ${JSON.stringify(next)}`, key));
      expect(out.length).toBeLessThan(READ_PAGE_CHARS + 1_000);
      read += bodyOf(out);
      next = nextOf(out);
    }
    expect(read === summary).toBe(true);
  });

  it("reads a note from its offset", async () => {
    const { key } = await newTenantWithId();
    const text = `${"a".repeat(10_000)}${"b".repeat(5_000)}`;
    const note = await api("POST", "/v1/memory", { text, title: "letters" }, { key });
    const id = await createConversation(undefined, key);
    const out = toolResult(await send(id, `@tool memory_get {"id":"${note.json.id}","offset":10000}`, key));
    expect(out.split("\n")[0]).toContain(`note ${note.json.id}: letters`);
    expect(bodyOf(out)).toBe("b".repeat(5_000));
    expect(nextOf(out)).toBeNull();
  });
});
