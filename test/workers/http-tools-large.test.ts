// A 1 MB HTTP tool answer (within the tool's cap) is stored whole — R2 record and the object's
// SQLite index — and lives through the lifecycle like any result: the in-turn compactor makes
// room for it in the turn that fetched it, a later turn replays it as a stub while the compactor
// handles that turn's fresh 1 MB answer, and the call the stub names brings back the bytes.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { api, createConversation, send, transcript, sendSseEvents, turnMessages } from "./helpers";
import { ofType, toolResults } from "../blocks";
import type { ModelRequest, ToolResultBlock, WireMessage } from "../../core/types";

const server = inject("httpToolServer");
const MB = 1024 * 1024;

const results = (messages: WireMessage[]) => toolResults(messages);
const text = (b: ToolResultBlock) =>
  typeof b.content === "string" ? b.content : b.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("a 1 MB HTTP tool answer", () => {
  it("is stored whole, compacted in the turn that fetched it, and stubbed in the next while the compactor handles that turn's own", async () => {
    const reg = await api("POST", "/v1/tools", {
      kind: "http",
      name: "dump_logs",
      description: "Dumps the full server log.",
      inputSchema: { type: "object" },
      endpoint: `${server}/big?bytes=${MB}&key=large`,
      maxResponseBytes: MB,
    });
    expect(reg.status).toBe(201);
    const id = await createConversation({ stubAfterExchanges: 1, stubBatchChars: 0 });
    await sendSseEvents(id, `@tool tool_activate {"name":"dump_logs"}`);

    const first = await sendSseEvents(id, `@tool dump_logs {}`);
    expect(first.map((e) => e.type)).toContain("compaction");
    expect(ofType(first.at(-1)!.data, "turn_end").stop_reason).toBe("end_turn");
    const stored = results(await transcript(id)).filter((b) => !/tool_activate|active/.test(text(b)));
    expect(stored).toHaveLength(1);
    expect(text(stored[0])).toHaveLength(MB);
    expect(text(stored[0]).endsWith("END-OF-BODY\n")).toBe(true);

    const second = await sendSseEvents(id, `@tool dump_logs {}`);
    const types = second.map((e) => e.type);
    expect(types).toContain("compaction");
    expect(ofType(second.at(-1)!.data, "turn_end").stop_reason).toBe("end_turn");
    // The turn's last request: the first answer as a stub, the second compacted, none of it cut in the record.
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    // The snapshot is the request as sent (or carries it under `request`).
    const last = (await api("GET", `/v1/conversations/${id}/prompts/${snaps[0].id}`)).json as {
      request?: ModelRequest;
      messages?: WireMessage[];
    };
    const sent = results(last.request?.messages ?? last.messages ?? []);
    const sentTexts = sent.map(text);
    const stub = sentTexts.find((t: string) => /conversation_read/.test(t) && t.length < 2_000);
    expect(stub, "the first 1 MB answer rides the later turn as a stub").toBeDefined();
    expect(sentTexts.every((t: string) => t.length < MB)).toBe(true);
    const all = results(await transcript(id)).filter((b) => text(b).length === MB);
    expect(all).toHaveLength(2);

    // The call the stub names brings back the original bytes.
    const call = [...stub!.matchAll(/conversation_read (\{[^}]*\})/g)].at(-1)![1];
    const read = await sendSseEvents(id, `@tool conversation_read ${call}`);
    const page = read.filter((e) => e.type === "message").flatMap((e) => results([e.data.message]))[0];
    const body = text(page).slice(text(page).indexOf("\n") + 1);
    expect(body.length).toBeGreaterThan(1000);
    expect(text(all[0]).startsWith(body)).toBe(true);
  }, 180_000);

  it("keeps a step of several 1 MB answers whole in the object's SQLite, no value near its 2 MB limit", async () => {
    const reg = await api("POST", "/v1/tools", {
      kind: "http",
      name: "dump_twice",
      description: "Dumps a log.",
      inputSchema: { type: "object" },
      endpoint: `${server}/big?bytes=${MB}&key=large2`,
    });
    expect(reg.status).toBe(201);
    const id = await createConversation();
    await send(id, `@tool tool_activate {"name":"dump_twice"}`);
    const r = await send(id, `@tool dump_twice {}\n@tool dump_twice {}\n@tool dump_twice {}`);
    expect(r.status).toBe(200);
    const carrier = turnMessages(r).find((m) => m.content.some((b) => b.type === "tool_result"));
    expect(carrier!.content.map((b) => text(ofType(b, "tool_result")).length)).toEqual([MB, MB, MB]);
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    const largest = await runInDurableObject(stub, async (_i, state) => {
      const sql = state.storage.sql;
      const row = sql.exec<{ n: number }>(`SELECT MAX(length(CAST(content AS BLOB))) AS n FROM messages`).one().n;
      const part = sql.exec<{ n: number }>(`SELECT MAX(length(CAST(body AS BLOB))) AS n FROM message_parts`).one().n;
      return Math.max(row, part);
    });
    expect(largest).toBeLessThan(1.6 * MB);
    // Read back from SQLite (not the in-memory cache): the same bytes.
    await evictDurableObject(stub);
    const again = (await transcript(id)).find((m) => m.id === carrier!.id);
    expect(JSON.stringify(again!.content)).toBe(JSON.stringify(carrier!.content));
  }, 120_000);
});
