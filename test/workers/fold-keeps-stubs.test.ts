// A fold never un-stubs: a tool result stubbed before the fold (its batch filled by a result the
// fold then summarized) stays stubbed in the tail the fold leaves, and the next turns' requests keep
// the same bytes before their new prompt (ConversationHead.stubbedThroughMessage, core/stubs.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api, inConversation, send } from "./helpers";
import { recordingClient } from "./recording-client";

const chat = (n: number) => [
  { role: "user", content: `question ${n}` },
  { role: "assistant", content: `answer ${n}` },
];
const tool = (n: number) => [
  { role: "user", content: `read file ${n}` },
  {
    role: "assistant",
    content: [{ type: "tool_use", id: `toolu_${n}`, name: "memory_search", input: { query: `file ${n}` } }],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${n}`, content: `${n}`.repeat(3_000) }] },
  { role: "assistant", content: `file ${n} read` },
];

type View = { messages: unknown[] };
const replay = async (id: string) => (await api("GET", `/v1/conversations/${id}/replay`)).json as View;
/** The view's messages as bytes, without the cache breakpoints (which follow the last message by design). */
const bytes = (messages: unknown[]) =>
  JSON.stringify(messages, (k, v: unknown) => (k === "cache_control" ? undefined : v));

describe("a fold and the stale tool-result stubs", () => {
  it("keeps stubbed what was stubbed when it committed, and the prefix still over the next turns", async () => {
    // Default settings: tailMessages 8, stale after 2 exchanges, batches of 4,000 chars, no fold of its own.
    const messages = [...chat(1), ...chat(2), ...chat(3), ...chat(4), ...tool(1), ...tool(2), ...chat(5), ...chat(6)];
    const imported = await api("POST", "/v1/conversations/import", { messages });
    expect(imported.status, imported.text).toBe(201);
    const id = (imported.json as { id: string }).id;
    const before = bytes((await replay(id)).messages);
    expect(before).not.toContain("1".repeat(3_000));
    expect(before).not.toContain("2".repeat(3_000));

    await inConversation(id, (i) =>
      i.store.putLease({ jobId: "fold_stubs", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    );
    const { client } = recordingClient();
    const job = { kind: "fold" as const, jobId: "fold_stubs", tenantId: "dev", conversationId: id, requestedAt: "" };
    expect(await runFoldJob(job, env as Env, { client })).toEqual({ applied: true, reason: "folded" });
    const head = (await api("GET", `/v1/conversations/${id}`)).json;
    expect(head.summarizedThroughMessage).toBe(12);
    expect(head.stubbedThroughMessage).toBe(16);

    let view = (await replay(id)).messages;
    expect(bytes(view)).not.toContain("2".repeat(3_000));
    for (let turn = 7; turn <= 10; turn++) {
      expect((await send(id, `question ${turn}`)).status).toBe(200);
      const next = (await replay(id)).messages;
      expect(bytes(next)).not.toContain("2".repeat(3_000));
      expect(bytes(next.slice(0, view.length))).toBe(bytes(view));
      view = next;
    }
  });
});
