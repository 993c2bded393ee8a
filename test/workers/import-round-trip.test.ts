// POST /v1/conversations/import inside workerd, against what the platform itself writes: its own
// export of a regenerate that came after an upload imports back, a server tool call comes back
// byte for byte, a transcript every later turn would fail on is refused at the door, and the
// OpenAPI document names the body types the route takes.
import { describe, expect, it } from "vitest";
import { api, importText, createConversation, newTenant, send, transcript } from "./helpers";

describe("importing the platform's own export", () => {
  it("takes a regenerate made after an attachment upload, its copy after the upload's note", async () => {
    const key = await newTenant();
    const conv = await createConversation(undefined, key);
    expect((await send(conv, "What do herons eat?", key)).status).toBe(200);
    const upload = await api("POST", `/v1/conversations/${conv}/attachments?name=n.txt`, "notes\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(upload.status, upload.text).toBe(201);
    expect((await api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true }, { key })).status).toBe(200);
    const original = await transcript(conv, key);
    expect(original.filter((m) => m.superseded).length).toBe(2);
    for (const [format, type] of [
      ["json", "application/json"],
      ["jsonl", "application/x-ndjson"],
    ]) {
      const exported = await api("GET", `/v1/conversations/${conv}/export?format=${format}`, undefined, { key });
      const imported = await importText(exported.text, key, type);
      expect(imported.status, imported.text).toBe(201);
      const copy = await transcript(imported.json.id, key);
      expect(copy.map((m) => m.superseded ?? false)).toEqual(original.map((m) => m.superseded ?? false));
      // The next turn runs: the replaced exchange stays out of the replay, the note stays in.
      const turn = await send(imported.json.id, "And storks?", key);
      expect(turn.status, turn.text).toBe(200);
    }
  }, 30_000);

  it("keeps a server tool call's keys in the order they came, so the export gives the same bytes", async () => {
    const key = await newTenant();
    const reply = {
      role: "assistant",
      content: [
        {
          type: "server_tool_use",
          id: "srvtoolu_k1",
          name: "web_search",
          caller: { type: "direct" },
          input: { query: "q" },
        },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_k1", content: [], caller: { type: "direct" } },
        { type: "text", text: "Nothing found." },
      ],
    };
    const body = JSON.stringify({ messages: [{ role: "user", content: "search" }, reply] });
    const imported = await importText(body, key, "application/json");
    expect(imported.status, imported.text).toBe(201);
    const exported = await api("GET", `/v1/conversations/${imported.json.id}/export?format=jsonl`, undefined, { key });
    const line = exported.text.split("\n").find((l) => l.includes("srvtoolu_k1"))!;
    expect(line).toContain(JSON.stringify(reply.content));
  });
});

describe("an import every later turn would fail on", () => {
  it("is a 400 naming the message, and nothing is created", async () => {
    const key = await newTenant();
    const callA = { type: "tool_use", id: "call_a", name: "memory_search", input: { query: "x" } };
    const cases: [unknown[], string][] = [
      [
        [
          { role: "assistant", content: [callA] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_a", content: "r" }] },
          { role: "assistant", content: "done" },
        ],
        "messages[0]: a tool_use before the transcript's first user message",
      ],
      [
        [
          { role: "user", content: "q" },
          { role: "assistant", content: [callA] },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "call_a",
                content: [{ type: "text", text: "r", citations: [{ type: "char_location", cited_text: "r" }] }],
              },
            ],
          },
          { role: "assistant", content: "done" },
        ],
        "messages[2]: citations belong in an assistant message's text",
      ],
    ];
    for (const [messages, problem] of cases) {
      const r = await importText(JSON.stringify({ messages }), key, "application/json");
      expect(r.status, r.text).toBe(400);
      expect(r.json.error?.message).toContain(problem);
    }
    expect((await api("GET", "/v1/conversations", undefined, { key })).json.data).toEqual([]);
  });
});

describe("the OpenAPI document's import operation", () => {
  it("names the body types the route takes: JSON and NDJSON, not raw bytes", async () => {
    const doc = (await api("GET", "/openapi.json", undefined, { key: "" })).json as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    const content = doc.paths["/v1/conversations/import"].post.requestBody?.content ?? {};
    expect(Object.keys(content).sort()).toEqual(["application/json", "application/x-ndjson"]);
  });
});
