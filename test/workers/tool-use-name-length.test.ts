// The Messages API refuses a history whose tool_use name is over 200 characters
// (`messages.N.content.M.tool_use.name: String should have at most 200 characters`,
// anthropics/claude-code#2673). A model that calls a tool by such a name gets its "unknown tool"
// result, and neither that turn's next call nor any later turn may send the name back whole: the
// conversation would be stuck on that 400 for good.
import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelRequest, WireMessage } from "../../core/types";
import { api, createConversation, send, transcript } from "./helpers";

const LONG = "x".repeat(201);

/** The tool_use names of every request the conversation's turns sent, oldest first. */
async function sentToolNames(id: string): Promise<string[][]> {
  const list = await api("GET", `/v1/conversations/${id}/prompts`);
  expect(list.status).toBe(200);
  const names: string[][] = [];
  for (const p of [...list.json.data].reverse()) {
    const sent = (await api("GET", `/v1/conversations/${id}/prompts/${p.id}`)).json as unknown as ModelRequest;
    names.push(
      (sent.messages as WireMessage[]).flatMap((m) =>
        typeof m.content === "string"
          ? []
          : m.content.flatMap((b: ContentBlock) => (b.type === "tool_use" ? [b.name] : [])),
      ),
    );
  }
  return names;
}

describe("a tool called by a name over 200 characters", () => {
  it("is answered as unknown, and no later request carries the name over 200 characters", async () => {
    const id = await createConversation({ model: "claude-sonnet-5-5" });
    const first = await send(id, `try this\n@tool ${LONG} {}`);
    expect(first.status).toBe(200);
    expect(first.json.stop_reason).toBe("end_turn");
    const second = await send(id, "hello again");
    expect(second.status).toBe(200);
    expect(second.json.stop_reason).toBe("end_turn");

    const names = await sentToolNames(id);
    // The call's step, the step after its result, and the next turn's request.
    expect(names).toHaveLength(3);
    expect(names[1]).toHaveLength(1);
    expect(names[2]).toHaveLength(1);
    for (const name of names.flat()) expect([...name].length).toBeLessThanOrEqual(200);
    // The stored call keeps the name the model gave; the result says no such tool ran.
    const blocks = (await transcript(id)).flatMap((m) => m.content);
    expect(blocks.some((b) => b.type === "tool_use" && b.name === LONG)).toBe(true);
    const result = blocks.find((b) => b.type === "tool_result");
    expect(JSON.stringify(result)).toContain("unknown tool");
  });
});
