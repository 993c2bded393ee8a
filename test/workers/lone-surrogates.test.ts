// Half a character (a lone surrogate) is a 400 from the Messages API on the request that carries
// it and on every later one that replays it. What a tenant registers or the model saves is cut at
// whole characters, and a request goes out well-formed whatever it holds.
import { describe, expect, inject, it } from "vitest";
import { api, createConversation, newTenant, send } from "./helpers";

const emoji = "\u{1F600}"; // two UTF-16 units

describe("no lone surrogate reaches the model", () => {
  it("tool descriptions cut in their index lines keep the emoji whole, and the tenant's turns go out", async () => {
    const key = await newTenant();
    const tools = [
      { kind: "client", name: "pick", description: `${"c".repeat(159)}${emoji} asks the person` },
      {
        kind: "http",
        name: "weather",
        description: `${"a".repeat(119)}${emoji} looks up the weather`,
        endpoint: `${inject("httpToolServer")}/echo`,
      },
    ];
    for (const tool of tools)
      expect((await api("POST", "/v1/tools", { ...tool, inputSchema: { type: "object" } }, { key })).status).toBe(201);
    const id = await createConversation(undefined, key);
    const replay = await api("GET", `/v1/conversations/${id}/replay`, undefined, { key });
    const system = JSON.stringify(replay.json.system);
    expect(system).toContain(`- pick: ${"c".repeat(159)} (runs on the client)`);
    expect(system).toContain(`- weather: ${"a".repeat(119)} (tool_activate first)`);
    expect((await send(id, "hello", key)).status).toBe(200);
  });

  it("memory_save's title from a long first line keeps the emoji whole; the note and the next turn are fine", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const text = `${"b".repeat(78)}${emoji}xyz more words`;
    const saved = await send(id, `@tool memory_save ${JSON.stringify({ text })}`, key);
    expect(saved.status).toBe(200);
    const notes = await api("GET", "/v1/memory", undefined, { key });
    const title = notes.json.data[0].title;
    expect(title).toBe(`${"b".repeat(78)}…`);
    expect((await send(id, "again", key)).status).toBe(200);
  });
});
