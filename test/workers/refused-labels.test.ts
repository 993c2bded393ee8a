// The index outbox's refused marks (durable-objects/conversation/index-outbox.ts labelledDocs),
// over a store of plain messages: a refused turn's messages are marked however the turn falls
// into batches, a fallback's answer after the refusal clears the prompt's mark, a sub-agent's
// messages inside a refused turn go with it, and a batch of turns without a refusal is indexed
// as before (no relabel). On a real shard, a search with withoutRefused (the model's) leaves the
// marked documents out on both the lexical and the semantic path, and a person's search finds
// them under their transcript roles.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { StoredMessage } from "../../core/types";
import { labelledDocs, withheldRefused } from "../../durable-objects/conversation/index-outbox";
import { shardDatabase, shardNames } from "../../services/cortex/routing";
import { refusedRole, searchCortexPage, upsertDocs } from "../../services/cortex/search-index";
import { cortexFusionFor } from "../../services/semantic/select";
import { note } from "../cortex-docs";

const head = { tenantId: "ten_x", id: "conv_x", superseded: [] };

/** A store over `messages` (seq = place + 1), as labelledDocs reads it. */
function storeOf(messages: StoredMessage[]) {
  return {
    range: (from: number, to: number) => messages.filter((m) => m.seq >= from && m.seq <= to),
    lastSeq: () => messages.length,
    refusalBetween: (from: number, to: number) =>
      messages.some((m) => m.seq >= from && m.seq <= to && m.stopReason === "refusal"),
  };
}

let seq = 0;
const msg = (role: "user" | "assistant", text: string, extra: Partial<StoredMessage> = {}): StoredMessage => ({
  id: `msg_${++seq}`,
  seq: 0,
  role,
  content: [{ type: "text", text }],
  createdAt: "2026-01-01T00:00:00.000Z",
  ...extra,
});
const numbered = (list: StoredMessage[]) => list.map((m, i) => ({ ...m, seq: i + 1 }));
const roles = (docs: ReturnType<typeof labelledDocs>) => docs.map((d) => [d.seq, d.role, d.relabel ?? false]);

describe("refused marks of the index", () => {
  it("mark a refused turn in one batch, and leave the turn before it unmarked", () => {
    const all = numbered([
      msg("user", "hello"),
      msg("assistant", "hi"),
      msg("user", "the bad ask"),
      msg("assistant", "no", { stopReason: "refusal" }),
    ]);
    expect(roles(labelledDocs(storeOf(all), head, all))).toEqual([
      [1, "user", true],
      [2, "assistant", true],
      [3, refusedRole("user"), true],
      [4, refusedRole("assistant"), true],
    ]);
    // A later turn without a refusal: indexed as before.
    const later = numbered([...all, msg("user", "something else"), msg("assistant", "sure")]);
    expect(roles(labelledDocs(storeOf(later), head, later.slice(4)))).toEqual([
      [5, "user", false],
      [6, "assistant", false],
    ]);
  });

  it("relabel the prompt of an earlier batch once its refusal comes, and again once a fallback answers", () => {
    const asked = numbered([msg("user", "hello"), msg("assistant", "hi"), msg("user", "the bad ask")]);
    expect(roles(labelledDocs(storeOf(asked), head, asked.slice(2)))).toEqual([[3, "user", false]]);
    const refused = numbered([...asked, msg("assistant", "", { stopReason: "refusal" })]);
    expect(roles(labelledDocs(storeOf(refused), head, refused.slice(3)))).toEqual([
      [3, refusedRole("user"), true],
      [4, refusedRole("assistant"), true],
    ]);
    const answered = numbered([...refused, msg("assistant", "the fallback's answer", { stopReason: "end_turn" })]);
    expect(roles(labelledDocs(storeOf(answered), head, answered.slice(4)))).toEqual([
      [3, "user", true],
      [4, refusedRole("assistant"), true],
      [5, "assistant", true],
    ]);
  });

  it("take a sub-agent's messages of a refused turn with it, under the tool role", () => {
    const agent = { segment: "seg_1", name: "helper", toolUseId: "toolu_1" };
    const all = numbered([
      msg("user", "the bad ask"),
      msg("assistant", "delegating"),
      msg("user", "the task", { agent }),
      msg("assistant", "the sub-agent's answer", { agent }),
      msg("assistant", "no", { stopReason: "refusal" }),
    ]);
    expect(roles(labelledDocs(storeOf(all), head, all)).map(([s, r]) => [s, r])).toEqual([
      [1, refusedRole("user")],
      [2, refusedRole("assistant")],
      [3, refusedRole("tool")],
      [4, refusedRole("assistant")],
      [5, refusedRole("assistant")],
    ]);
  });

  it("withhold a refused turn's content from a read, whichever part of it is read", () => {
    const all = numbered([
      msg("user", "hello"),
      msg("assistant", "hi"),
      msg("user", "the bad ask"),
      msg("assistant", "no", { stopReason: "refusal" }),
      msg("user", "next"),
    ]);
    const read = withheldRefused(storeOf(all), head, all.slice(1, 3));
    expect(read[0].content).toEqual(all[1].content);
    expect(JSON.stringify(read[1].content)).toContain("withheld");
    expect(JSON.stringify(withheldRefused(storeOf(all), head, all.slice(4)))).toContain("next");
  });
});

describe("a search of a shard holding refused marks", () => {
  it("leaves them out of the model's search on both paths, and gives them their roles in a person's", async () => {
    const db = shardDatabase(env, shardNames(env)[0]);
    const tenant = `ten_refused${Date.now()}`;
    const message = (refId: string, role: string, body: string) => ({
      ...note(tenant, refId, body),
      kind: "message" as const,
      conversationId: "conv_a",
      seq: 1,
      role,
    });
    await upsertDocs(db, [
      message("msg_refused", refusedRole("user"), "the quagga recipe"),
      message("msg_reply", refusedRole("assistant"), "no quagga"),
      // Found by its trigrams only (the local path's embedding): the vector ranking's own hit.
      message("msg_near", refusedRole("tool"), "quaggaland quaggas"),
      message("msg_kept", "user", "a quagga photo"),
    ]);
    for (const fusion of [undefined, cortexFusionFor({ SEMANTIC_SEARCH: "local" }, db)]) {
      const search = async (withoutRefused: boolean) =>
        (await searchCortexPage(db, tenant, { q: "quagga", limit: 10, withoutRefused, fusion })).hits
          .map((h) => [h.id, h.role])
          .sort();
      expect(await search(true)).toEqual([["msg_kept", "user"]]);
      const all = await search(false);
      expect(all).toEqual(
        expect.arrayContaining([
          ["msg_kept", "user"],
          ["msg_refused", "user"],
          ["msg_reply", "assistant"],
        ]),
      );
      if (fusion) expect(all).toContainEqual(["msg_near", "user"]);
    }
  });
});
