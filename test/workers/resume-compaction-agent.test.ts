// A paused turn that resumes builds its in-turn compaction from the master's own messages: a
// sub-agent's thread, saved in the same transcript range, never reaches the master's requests
// (its <turn_state>), exactly as in a turn that never paused.
import { describe, expect, it } from "vitest";
import { api, createConversation, send } from "./helpers";

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const MARKER = "ZEBRA7731QX";

describe("a resumed turn's in-turn compaction", () => {
  it("leaves the sub-agent's private thread out of the master's requests", async () => {
    const id = await createConversation({ contextWindowTokens: 24_000, outputReserveTokens: 2_000 });
    const upload = await api(
      "POST",
      `/v1/conversations/${id}/attachments?name=secret.txt`,
      `the ledger code is ${MARKER}\n`,
      {
        raw: true,
        headers: { "content-type": "text/plain" },
      },
    );
    const secret = upload.json.id;
    await send(id, `@tool tool_activate {"name":"agent_delegate"}`);
    const task = `read it\n@tool file_read {"attachment_id":"${secret}","lines":"1-1"}`;
    const paused = await api("POST", `/v1/conversations/${id}/messages`, {
      content: `go\n@tool agent_delegate ${JSON.stringify({ name: "r", task })}\n@tool get_weather {"city":"Oslo"}`,
      tools: [weather],
    });
    const [call] = paused.json.requires_action!.calls;
    // A result big enough that the resumed step compacts.
    const resumed = await api("POST", `/v1/conversations/${id}/tool-results`, {
      results: [{ tool_use_id: call.id, content: "lorem ipsum dolor sit amet ".repeat(3000) }],
    });
    expect(resumed.status).toBe(200);
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    const sent = await Promise.all(
      snaps.map(async (s) => JSON.stringify((await api("GET", `/v1/conversations/${id}/prompts/${s.id}`)).json)),
    );
    // The resumed step compacted (so the check below is about a compacted request)…
    expect(sent.some((q) => q.includes("turn_state"))).toBe(true);
    // …and no request the master sent carries what only the sub-agent read.
    expect(sent.filter((q) => q.includes(MARKER))).toHaveLength(0);
  });
});
