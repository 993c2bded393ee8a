// The automatic title from a first exchange longer than a page of messages: a first turn of many
// tool steps puts its reply's text past the first 40 messages. It is still the first exchange
// (docs/api-notes.md): a live turn titles its conversation once it ends, and an untitled import is
// titled after its first turn, from the first exchange it holds. The offline model titles with the
// first six words of the first prompt. The paged search finds what the whole transcript read at
// once would: firstExchange over withoutRefusedTurns of the master's messages.
import { describe, expect, it } from "vitest";
import { withoutRefusedTurns } from "../../core/replay-rules";
import { DEFAULT_TITLE, firstExchange, IMPORTED_TITLE } from "../../core/title";
import type { StoredMessage } from "../../core/types";
import { type ExchangeSource, firstKeptExchange } from "../../durable-objects/conversation/auto-title";
import { masterMessages } from "../../durable-objects/conversation/regenerate";
import type { SupersededRange } from "../../services/record/conversation-head";
import { api, eventually, importText, inConversation, newTenant, send } from "./helpers";

const titleOf = async (id: string, key: string) =>
  (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.title as string;
/** The title once it is no longer `untitled`; the wait gives up (and the test fails) otherwise. */
const titledFrom = (id: string, key: string, untitled: string) =>
  eventually(async () => {
    const title = await titleOf(id, key);
    return title === untitled ? null : title;
  });

describe("automatic title of a first exchange past 40 messages", () => {
  it("an import whose first turn holds 20 tool steps is titled after its first turn", async () => {
    const key = await newTenant();
    const messages: unknown[] = [{ role: "user", content: "Plan the migration of the billing database to Postgres" }];
    for (let i = 0; i < 20; i++) {
      messages.push({
        role: "assistant",
        content: [{ type: "tool_use", id: `toolu_${i}`, name: "bash", input: { cmd: `step ${i}` } }],
      });
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: `ok ${i}` }],
      });
    }
    // The 42nd message: the first reply with text.
    messages.push({ role: "assistant", content: "The migration plan: dump, convert, load, verify." });
    const r = await importText(JSON.stringify({ messages }), key);
    expect(r.status, r.text).toBe(201);
    expect(r.json.title).toBe(IMPORTED_TITLE);
    expect((await send(r.json.id, "and the rollback?", key)).status).toBe(200);
    expect(await titledFrom(r.json.id, key, IMPORTED_TITLE)).toBe("Plan the migration of the billing");
  });

  it("a live first turn of 21 tool steps (44 messages) is titled once it ends", async () => {
    const key = await newTenant();
    const id = (await api("POST", "/v1/conversations", {}, { key })).json.id as string;
    const calls = Array.from({ length: 21 }, (_, i) => `@tool memory_search {"query":"billing migration ${i}"}`);
    const r = await send(id, `Plan the billing database migration\n@tools-per-step 1\n${calls.join("\n")}`, key);
    expect(r.status).toBe(200);
    expect(await inConversation(id, async (o) => o.store.lastSeq())).toBe(44);
    expect(await titledFrom(id, key, DEFAULT_TITLE)).toBe("Plan the billing database migration");
  });
});

/** A store over these messages, as the object's answers its pages (without the byte bound). */
function storeOf(messages: readonly StoredMessage[]): ExchangeSource {
  return {
    lastSeq: () => messages.at(-1)?.seq ?? 0,
    transcriptPage: (after, { limit, through = Number.MAX_SAFE_INTEGER }) => {
      const left = messages.filter((m) => m.seq > after && m.seq <= through);
      return { messages: left.slice(0, limit), more: left.length > limit };
    },
    refusalBetween: (from, to) => messages.some((m) => m.seq >= from && m.seq <= to && m.stopReason === "refusal"),
  };
}

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOTE = '<attachment id="att_x1" name="a.txt">\ntext, 1 KB\n</attachment>';
/** The kinds of message that decide a first exchange: prompts, notes, results, replies, refusals. */
const KINDS: ((n: number) => Pick<StoredMessage, "role" | "content" | "stopReason">)[] = [
  (n) => ({ role: "user", content: [{ type: "text", text: `prompt ${n}` }] }),
  () => ({ role: "user", content: [{ type: "text", text: NOTE }] }),
  () => ({ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] }),
  (n) => ({
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "t", content: "ok" },
      { type: "text", text: `asks on ${n}` },
    ],
  }),
  (n) => ({ role: "assistant", content: [{ type: "text", text: `reply ${n}` }] }),
  () => ({ role: "assistant", content: [{ type: "tool_use", id: "t", name: "bash", input: {} }] }),
  () => ({ role: "assistant", content: [{ type: "text", text: " " }] }),
  (n) => ({ role: "assistant", content: [{ type: "text", text: `refused ${n}` }], stopReason: "refusal" }),
];

describe("the first exchange read a page at a time", () => {
  it("is the one the whole transcript read at once gives, refused turns, sub-agents and replaced exchanges left out", () => {
    const next = random(20261206);
    const pick = (n: number) => Math.floor(next() * n);
    let found = 0;
    for (let round = 0; round < 3000; round++) {
      const messages: StoredMessage[] = Array.from({ length: 1 + pick(30) }, (_, i) => ({
        id: `m${i + 1}`,
        seq: i + 1,
        createdAt: "2026-01-01T00:00:00.000Z",
        ...KINDS[pick(KINDS.length)](i + 1),
        ...(pick(12) === 0 ? { agent: { segment: "s", name: "a", toolUseId: "t" } } : {}),
      }));
      const from = 1 + pick(messages.length);
      const superseded: SupersededRange[] = pick(5) === 0 ? [{ fromSeq: from, toSeq: from + pick(4), by: "m1" }] : [];
      const head = { superseded };
      const whole = firstExchange(withoutRefusedTurns(masterMessages(messages, head), true));
      if (whole) found++;
      for (const pageMessages of [1, 2, 3, 7, 40])
        expect(firstKeptExchange(storeOf(messages), { head, pageMessages }), `round ${round}`).toEqual(whole);
    }
    // The generator reaches both answers often.
    expect(found).toBeGreaterThan(300);
    expect(found).toBeLessThan(2700);
  });
});

describe("the first exchange's search", () => {
  it("stops at its bound: a reply past it is not read, nor judged from the messages before it", () => {
    // A prompt, nine tool steps (18 messages), then the reply with text at seq 20.
    const messages: StoredMessage[] = [
      { role: "user" as const, content: [{ type: "text" as const, text: "prompt" }] },
      ...Array.from({ length: 9 }, () => [
        { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "t", name: "bash", input: {} }] },
        { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "t", content: "ok" }] },
      ]).flat(),
      { role: "assistant" as const, content: [{ type: "text" as const, text: "the reply" }] },
    ].map((m, i) => ({ ...m, id: `m${i + 1}`, seq: i + 1, createdAt: "2026-01-01T00:00:00.000Z" }));
    const head = { superseded: [] };
    expect(firstKeptExchange(storeOf(messages), { head, pageMessages: 4, maxMessages: 20 })).toEqual({
      prompt: "prompt",
      reply: "the reply",
    });
    expect(firstKeptExchange(storeOf(messages), { head, pageMessages: 4, maxMessages: 19 })).toBeNull();
    // A bound at the reply, whose turn's end (the next prompt) lies past it: not judged either; one
    // message further, it is.
    const askedAgain: StoredMessage[] = [
      ...messages,
      {
        id: "m21",
        seq: 21,
        createdAt: "2026-01-01T00:00:00.000Z",
        role: "user",
        content: [{ type: "text", text: "again" }],
      },
    ];
    expect(firstKeptExchange(storeOf(askedAgain), { head, pageMessages: 4, maxMessages: 20 })).toBeNull();
    expect(firstKeptExchange(storeOf(askedAgain), { head, pageMessages: 4, maxMessages: 21 })?.reply).toBe("the reply");
  });
});
