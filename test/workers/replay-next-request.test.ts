// GET /replay shows exactly what the next model request carries: the reviewer's three cases. The
// next turn's first request is read back from its prompt snapshot and compared with the replay
// taken just before it (cache breakpoints aside: the request's last message is the new prompt,
// so its breakpoints sit one message further on).
import { describe, expect, it } from "vitest";
import type { WireMessage } from "../../core/types";
import { api, createConversation, inConversation, send } from "./helpers";

const withoutBreakpoints = (messages: unknown): WireMessage[] =>
  JSON.parse(JSON.stringify(messages, (k, v: unknown) => (k === "cache_control" ? undefined : v)));

/** Ids of the conversation's prompt snapshots. */
async function snapshotIds(id: string): Promise<number[]> {
  const r = await api("GET", `/v1/conversations/${id}/prompts`);
  return (r.json.data as { id: number }[]).map((s) => s.id);
}

/** The replay now, then the first request of the turn `prompt` starts, without its new prompt. */
async function replayThenNext(id: string, prompt: string) {
  const replay = await api("GET", `/v1/conversations/${id}/replay`);
  expect(replay.status, replay.text.slice(0, 300)).toBe(200);
  const before = Math.max(0, ...(await snapshotIds(id)));
  const turn = await send(id, prompt);
  expect(turn.status, turn.text.slice(0, 300)).toBe(200);
  const first = Math.min(...(await snapshotIds(id)).filter((n) => n > before));
  const sent = (await api("GET", `/v1/conversations/${id}/prompts/${first}`)).json as unknown as {
    messages: WireMessage[];
  };
  const last = sent.messages.at(-1)!;
  expect(JSON.stringify(last.content)).toContain(prompt);
  return {
    replay: replay.json,
    shown: withoutBreakpoints(replay.json.messages),
    next: withoutBreakpoints(sent.messages.slice(0, -1)),
  };
}

describe("GET /replay is the next request", { timeout: 120_000 }, () => {
  it("stubs the stale results and drops the thinking that the next request does", async () => {
    const id = await createConversation();
    expect((await send(id, "base\n@reply-chars 6000")).status).toBe(200);
    expect((await send(id, '@tool conversation_read {"from_seq":2,"to_seq":2}')).status).toBe(200);
    expect((await send(id, "turn A")).status).toBe(200);
    const { replay, shown, next } = await replayThenNext(id, "turn B");
    // The next request stubs the read's result, and a thinking block after it loses its prefix.
    expect(JSON.stringify(next[4])).toContain("[stale tool result replaced by this stub:");
    expect(replay.estimate.stubbedResults).toBe(1);
    expect(shown).toEqual(next);
  });

  it("ends on a cut-off reply without the continue prompt the next request never sends", async () => {
    const id = await createConversation();
    expect((await send(id, "hello")).status).toBe(200);
    await inConversation(id, (i) =>
      i.record.append([
        { role: "user", content: [{ type: "text", text: "write a long story" }] },
        { role: "assistant", content: [{ type: "text", text: "Once upon a time" }], stopReason: "max_tokens" },
      ]),
    );
    const { shown, next } = await replayThenNext(id, "next prompt");
    expect(shown.at(-1)).toMatchObject({ role: "assistant" });
    expect(shown).toEqual(next);
  });

  it("answers a view over Workers' 32 MiB RPC cap, whole and in the same shape", { timeout: 300_000 }, async () => {
    const id = await createConversation({ foldThresholdChars: 50_000_000 });
    // "€" makes each text a two-byte string in RPC serialization: 220 × 100,000 chars is 44 MB there.
    const text = (n: number) => `€ ${n} ${"words and more words ".repeat(5_000)}`.slice(0, 100_000);
    for (let batch = 0; batch < 2; batch++) {
      const messages = Array.from({ length: 110 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        text: text(batch * 110 + i),
      }));
      const r = await api("POST", `/v1/conversations/${id}/import`, { messages });
      expect(r.status, r.text.slice(0, 300)).toBe(201);
    }
    const r = await api("GET", `/v1/conversations/${id}/replay`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    // The same JSON as one JSON.stringify of the view: same keys, same order, same bytes.
    expect(r.text).toBe(JSON.stringify(r.json));
    const view = r.json;
    expect(Object.keys(view).slice(0, 2)).toEqual(["model", "max_tokens"]);
    expect(Object.keys(view).slice(-4)).toEqual(["system", "tools", "messages", "estimate"]);
    expect(view.messages).toHaveLength(220);
    expect(JSON.stringify(view.messages[219])).toContain("€ 219 ");
    expect(view.estimate.messages).toBe(220);
  });
});
