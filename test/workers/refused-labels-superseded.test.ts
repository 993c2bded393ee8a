// The index outbox's refused marks (index-outbox.ts labelledDocs) for exchanges a regenerate
// superseded, indexed after the mark (an outbox that lagged): each superseded exchange is a
// history of its own, so its refused turn is marked as memory_search, conversation_read and
// memory_get see it (refusedAmong), and an ordinary exchange after a refused turn is not.
import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../../core/types";
import { labelledDocs, withheldRefused } from "../../durable-objects/conversation/index-outbox";
import { refusedRole } from "../../services/cortex/search-index";

const storeOf = (messages: StoredMessage[]) => ({
  range: (from: number, to: number) => messages.filter((m) => m.seq >= from && m.seq <= to),
  lastSeq: () => messages.length,
  refusalBetween: (from: number, to: number) =>
    messages.some((m) => m.seq >= from && m.seq <= to && m.stopReason === "refusal"),
});
const msg = (role: "user" | "assistant", text: string, stopReason?: StoredMessage["stopReason"]) => ({
  role,
  text,
  stopReason,
});
const numbered = (list: ReturnType<typeof msg>[]): StoredMessage[] =>
  list.map(({ role, text, stopReason }, i) => ({
    id: `msg_${i + 1}`,
    seq: i + 1,
    role,
    content: [{ type: "text", text }],
    createdAt: "2026-01-01T00:00:00.000Z",
    ...(stopReason ? { stopReason } : {}),
  }));
const roles = (docs: ReturnType<typeof labelledDocs>) => docs.map((d) => [d.seq, d.role]);

describe("refused marks of superseded exchanges", () => {
  it("mark a superseded refused exchange, whatever its copy got", () => {
    for (const last of [msg("assistant", "the other model's answer"), msg("assistant", "", "refusal")]) {
      const all = numbered([
        msg("user", "hello"),
        msg("assistant", "hi"),
        msg("user", "the bad ask"),
        msg("assistant", "", "refusal"),
        msg("user", "the bad ask"),
        last,
      ]);
      const head = { tenantId: "ten_x", id: "conv_x", superseded: [{ fromSeq: 3, toSeq: 4, by: "msg_5" }] };
      expect(roles(labelledDocs(storeOf(all), head, all.slice(2, 4)))).toEqual([
        [1, "user"],
        [2, "assistant"],
        [3, refusedRole("user")],
        [4, refusedRole("assistant")],
      ]);
      expect(withheldRefused(storeOf(all), head, all.slice(2, 4)).map((m) => m.content[0])).toEqual([
        expect.objectContaining({ text: expect.stringContaining("[withheld") }),
        expect.objectContaining({ text: expect.stringContaining("[withheld") }),
      ]);
    }
  });

  it("leave a superseded ordinary exchange after a refused turn unmarked", () => {
    const all = numbered([
      msg("user", "the bad ask"),
      msg("assistant", "", "refusal"),
      msg("user", "a lake"),
      msg("assistant", "a lake it is"),
      msg("user", "a lake"),
      msg("assistant", "a lake again"),
    ]);
    const head = { tenantId: "ten_x", id: "conv_x", superseded: [{ fromSeq: 3, toSeq: 4, by: "msg_5" }] };
    const docs = labelledDocs(storeOf(all), head, all.slice(2, 4));
    expect(roles(docs).filter(([seq]) => seq === 3 || seq === 4)).toEqual([
      [3, "user"],
      [4, "assistant"],
    ]);
    expect(withheldRefused(storeOf(all), head, all.slice(2, 4))).toEqual(all.slice(2, 4));
  });
});
