// memory_search tells the model whose words a message hit holds from the hit's `from`, not its
// transcript role: a user message that carries tool results (or a sub-agent's task) has the role
// `user` though no person typed it, and the model must not credit the person with a tool's words.
// The person's and the assistant's hits keep their "(user, …)" / "(assistant, …)" wording.
import { describe, expect, it } from "vitest";
import { memorySearch } from "../../agent/tools/memory-search";
import type { SearchHit } from "../../services/cortex/search-index";

const hit = (id: string, role: string, from: SearchHit["from"]): SearchHit => ({
  kind: "message",
  id,
  conversationId: "conv_a",
  messageId: id,
  seq: 3,
  role,
  from,
  createdAt: "2026-03-04T05:06:07.000Z",
  snippet: `words of ${id}`,
  score: 1,
});

async function lines(hits: SearchHit[]): Promise<string[]> {
  const result = await memorySearch.run(
    { query: "words" },
    {
      tenantId: "t",
      conversationId: "conv_b",
      progress: () => {},
      search: async () => hits,
      activeTools: [],
      activateTool: async () => {},
    },
  );
  return String(result.content).split("\n");
}

describe("memory_search: whose words a message hit holds", () => {
  it("says a tool result's carrier is a tool's words, and keeps the person's and the assistant's wording", async () => {
    const [, person, , tool, , mine] = await lines([
      hit("msg_person", "user", "person"),
      hit("msg_tool", "user", "tool"),
      hit("msg_mine", "assistant", "assistant"),
    ]);
    expect(person).toBe("1. conversation conv_a, seq 3 (user, 2026-03-04): words of msg_person");
    expect(mine).toBe("3. conversation conv_a, seq 3 (assistant, 2026-03-04): words of msg_mine");
    expect(tool).toMatch(/^2\. conversation conv_a, seq 3 \(a tool's result[^)]*, 2026-03-04\): words of msg_tool$/);
    expect(tool).not.toContain("(user");
  });
});
