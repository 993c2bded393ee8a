// A tool result that shares its user message with the next question (an imported Anthropic
// transcript's, a client's) is stubbed once stale like a result in a message of its own: only its
// tool_result block, the question beside it untouched, the same stub bytes on every build.
import { expect, it } from "vitest";
import type { WireMessage } from "../../core/types";
import { blocksIn, blocksOf, resultText, toolResults } from "../blocks";
import { api, newTenantWithId, send } from "./helpers";

it("a large tool result imported beside the next question is stubbed once stale, its text kept", async () => {
  const { key } = await newTenantWithId();
  const big = "page dump line with words ".repeat(400); // ~10,400 chars
  const messages = [
    { role: "user", content: "start" },
    { role: "assistant", content: [{ type: "tool_use", id: "call_0", name: "lookup", input: { q: "a" } }] },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_0", content: big },
        { type: "text", text: "and now question 1" },
      ],
    },
    { role: "assistant", content: "answer 1" },
    // control: the same result in a message of its own
    { role: "user", content: "question 2" },
    { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "lookup", input: { q: "b" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: big }] },
    { role: "assistant", content: "answer 2" },
  ];
  const imported = await api("POST", "/v1/conversations/import", { messages }, { key });
  expect(imported.status).toBe(201);
  const id = imported.json.id;
  await api("PATCH", `/v1/conversations/${id}`, { settings: { stubBatchChars: 0 } }, { key });
  for (let i = 0; i < 6; i++) expect((await send(id, `live question ${i}`, key)).status).toBe(200);
  const replay = async () => (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key })).json;
  const first = await replay();
  const wire = first.messages as WireMessage[];
  const results = toolResults(wire);
  expect(results.map((b) => b.tool_use_id)).toEqual(["call_0", "call_1"]);
  for (const r of results) {
    expect(resultText(r), r.tool_use_id).toMatch(/^\[stale tool result replaced by this stub: lookup /);
    expect(resultText(r)).not.toContain("page dump line");
  }
  // The question beside the result is never touched, and still counted as its text.
  const mixed = wire.find((m) => blocksOf(m.content, "tool_result").some((b) => b.tool_use_id === "call_0"));
  expect(blocksIn(mixed!).map((b) => b.type)).toEqual(["tool_result", "text"]);
  expect(blocksOf(mixed!.content, "text")[0].text).toBe("and now question 1");
  expect(first.estimate.stubbedResults).toBe(2);
  // Deterministic: the same history gives the same bytes.
  expect(JSON.stringify((await replay()).messages)).toBe(JSON.stringify(first.messages));
}, 60_000);
