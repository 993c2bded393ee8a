// A never-folding tail (the last `tailMessages` messages) holding more text than the model's window:
// an imported 4,000,000-char message, or two posted turns of 999,000 chars. The request carries the
// oversized earlier message as a stub (its head and the conversation_read call that reads the
// rest), so the next turn is answered; the stored message stays whole. A conversation whose settings
// overstate chars per token gets there through the forced pass after the provider's overflow 400.
import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelRequest, StoredMessage } from "../../core/types";
import { reportInjections } from "./fault-ledger";
import { api, createConversation, eventually, newTenant, send } from "./helpers";

/** `n` chars of distinct words: a tokenizer counts them roughly as prose. */
const words = (n: number) => {
  let s = "";
  let i = 0;
  while (s.length < n) s += `word${i++} `;
  return s.slice(0, n);
};

/**
 * `n` chars of pseudo-random hex, seeded: about 0.73 model tokens a char, so one 999,000-char prompt
 * fits a 1,000,000-token window and two do not.
 */
const hex = (n: number, seed: number) => {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push("0123456789abcdef"[Math.floor((x / 2147483648) * 16)]);
  }
  return out.join("");
};

/** A prompt snapshot (its body is written to R2 after the turn answers: waited for). */
async function snapshot(id: string, key: string, snap: number): Promise<ModelRequest> {
  return eventually(async () => {
    const r = await api("GET", `/v1/conversations/${id}/prompts/${snap}`, undefined, { key });
    return r.status === 200 ? (r.json as unknown as ModelRequest) : null;
  }, 30_000);
}

async function lastPrompt(id: string, key: string): Promise<ModelRequest> {
  const snaps = (await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).json.data;
  return snapshot(id, key, snaps[0].id);
}

async function stored(id: string, key: string): Promise<StoredMessage[]> {
  return (await api("GET", `/v1/conversations/${id}/messages?limit=100`, undefined, { key })).json
    .data as unknown as StoredMessage[];
}

const texts = (r: ModelRequest) =>
  r.messages.flatMap((m) =>
    (typeof m.content === "string" ? [{ type: "text", text: m.content } as ContentBlock] : m.content).flatMap((b) =>
      b.type === "text" ? [b.text] : [],
    ),
  );

/** The request's stub of `message` (found by its id), checked to name the call that reads the rest. */
function stubOf(request: ModelRequest, message: StoredMessage, conversationId: string): string {
  const stub = texts(request).find((t) => t.includes(message.id));
  expect(stub).toBeDefined();
  expect(stub).toContain(`seq ${message.seq}`);
  expect(stub).toMatch(/conversation_read \{"conversation_id":"[^"]+","message_id":"[^"]+","block":0,"offset":\d+\}/);
  expect(stub).toContain(conversationId);
  // Its head is the message's own first words.
  const text = (message.content[0] as { text: string }).text;
  expect(stub).toContain(text.slice(0, 200));
  expect(stub!.length).toBeLessThan(3_000);
  return stub!;
}

describe("an oversized message in the never-folding tail", () => {
  it("an imported 4,000,000-char message: later turns answer, the request carries its stub, the record keeps it whole", async () => {
    const key = await newTenant();
    const big = words(4_000_000);
    const imported = await api(
      "POST",
      "/v1/conversations/import",
      JSON.stringify({
        messages: [
          { role: "user", content: big },
          { role: "assistant", content: "ok" },
        ],
      }),
      { key, raw: true, headers: { "content-type": "application/json" } },
    );
    expect(imported.status).toBe(201);
    const id = (imported.json as { id: string }).id;
    const first = await send(id, "next", key);
    expect(first.status, first.text.slice(0, 300)).toBe(200);
    const second = await send(id, "and again", key);
    expect(second.status, second.text.slice(0, 300)).toBe(200);

    const messages = await stored(id, key);
    expect((messages[0].content[0] as { text: string }).text).toBe(big);
    const request = await lastPrompt(id, key);
    const stub = stubOf(request, messages[0], id);
    expect(JSON.stringify(request).length).toBeLessThan(200_000);
    // Byte-stable: the request of the turn before carried the very same stub.
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).json.data;
    const before = await snapshot(id, key, snaps.at(-1)!.id);
    expect(texts(before)).toContain(stub);
    // The /replay view carries the same stub.
    const replay = await api("GET", `/v1/conversations/${id}/replay`, undefined, { key });
    expect(replay.status).toBe(200);
    expect(texts(replay.json as unknown as ModelRequest)).toContain(stub);
    // The call the stub names reads the rest of the stored text, from where its head ends.
    const call = stub.match(/conversation_read (\{[^}]+\})/)![1];
    const read = await send(id, `@tool conversation_read ${call}`, key);
    expect(read.status, read.text.slice(0, 300)).toBe(200);
    const result = (read.json as unknown as { messages: StoredMessage[] }).messages
      .flatMap((m) => m.content)
      .find((b) => b.type === "tool_result") as { content: string } | undefined;
    expect(JSON.stringify(result?.content)).toContain(`chars 500-40500 of 4000000`);
    expect(JSON.stringify(result?.content)).toContain(big.slice(500, 700));
    reportInjections("oversized tail, an imported 4,000,000-char message", 1);
  }, 180_000);

  it("two posted turns of 999,000 chars: the second and every later turn answer", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const a = hex(999_000, 1);
    const b = hex(999_000, 2);
    expect((await send(id, a, key)).status).toBe(200);
    const second = await send(id, b, key);
    expect(second.status, second.text.slice(0, 300)).toBe(200);
    const third = await send(id, "what did I send?", key);
    expect(third.status, third.text.slice(0, 300)).toBe(200);

    const messages = await stored(id, key);
    expect((messages[0].content[0] as { text: string }).text).toBe(a);
    expect((messages[2].content[0] as { text: string }).text).toBe(b);
    const request = await lastPrompt(id, key);
    // The earlier prompts go as stubs; the newest prompt goes whole.
    stubOf(request, messages[0], id);
    expect(texts(request).at(-1)).toBe("what did I send?");
    reportInjections("oversized tail, two 999,000-char prompts", 1);
  }, 180_000);

  it("the current turn's own prompt is never stubbed", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const a = hex(999_000, 3);
    expect((await send(id, a, key)).status).toBe(200);
    const b = hex(999_000, 4);
    expect((await send(id, b, key)).status).toBe(200);
    const request = await lastPrompt(id, key);
    expect(texts(request)).toContain(b);
    expect(texts(request)).not.toContain(a);
  }, 180_000);

  it("settings that overstate chars per token: the forced pass after the overflow 400 stubs it, and the retry answers", async () => {
    const key = await newTenant();
    const id = await createConversation({ charsPerToken: 20 }, key);
    const a = hex(999_000, 5);
    expect((await send(id, a, key)).status).toBe(200);
    const second = await send(id, hex(999_000, 6), key);
    expect(second.status, second.text.slice(0, 300)).toBe(200);
    const third = await send(id, "still there?", key);
    expect(third.status, third.text.slice(0, 300)).toBe(200);
    const messages = await stored(id, key);
    expect((messages[0].content[0] as { text: string }).text).toBe(a);
    // The answered request came after the forced pass (the estimate saw no need for one).
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`, undefined, { key })).json.data;
    expect(snaps[0].compacted).toBe(true);
    const request = await snapshot(id, key, snaps[0].id);
    const stub = texts(request).find((t) => t.includes(messages[0].id));
    expect(stub).toMatch(/conversation_read \{"conversation_id":"[^"]+","message_id":"[^"]+","block":0,"offset":\d+\}/);
    reportInjections("oversized tail, overflow 400 the estimate missed", 1);
  }, 180_000);
});
