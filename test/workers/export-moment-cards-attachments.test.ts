// An export is its conversation at the moment it began (docs/api-notes.md, "Import and export"):
// a turn that compacts and a file uploaded while it is written add neither their compaction card
// nor their attachment to it, in any format. The export is held after it read the head, at its
// fold history, while the turn runs and the upload lands.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { exportText } from "../../services/transfer/export-format";
import { exportSourceFor } from "../../workers/chat/export-source";
import { envRunningBefore } from "./d1-gates";
import { api, createConversation, newTenantWithId, sendSseEvents } from "./helpers";

/** A text file large enough that reading it whole overflows a small context window. */
async function rowsFile(of: { id: string; name: string; key: string }) {
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
  const up = await api("POST", `/v1/conversations/${of.id}/attachments?name=${of.name}`, lines, {
    key: of.key,
    raw: true,
    headers: { "content-type": "text/plain" },
  });
  expect(up.status, up.text).toBe(201);
  return up.json.id as string;
}

interface Card {
  afterSeq: number;
  type: string;
}

/** What one format says of the export's moment, its cards and its attachments. */
function partsOf(text: string, format: "json" | "jsonl" | "markdown") {
  if (format === "json") {
    const doc = JSON.parse(text) as { conversation: { lastSeq: number }; cards: Card[]; attachments: { id: string }[] };
    return { lastSeq: doc.conversation.lastSeq, cards: doc.cards, attachments: doc.attachments.map((a) => a.id) };
  }
  if (format === "jsonl") {
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type?: string; lastSeq?: number; card?: Card; attachment?: { id: string } });
    return {
      lastSeq: lines[0].lastSeq ?? -1,
      cards: lines.flatMap((l) => (l.type === "card" && l.card ? [l.card] : [])),
      attachments: lines.flatMap((l) => (l.type === "attachment" && l.attachment ? [l.attachment.id] : [])),
    };
  }
  // Markdown: each card is a fenced JSON object, each attachment a list item naming its id.
  const cards = [...text.matchAll(/```json\n(\{[\s\S]*?\n\})\n```/g)]
    .map((m) => JSON.parse(m[1]) as Card)
    .filter((c) => typeof c.afterSeq === "number");
  const attachments = [...text.matchAll(/^- \[.*\]\(.*\) \(`(att_[^`]+)`/gm)].map((m) => m[1]);
  // Its last message's heading, as markdown writes no lastSeq of its own.
  const seqs = [...text.matchAll(/^### (\d+) · /gm)].map((m) => Number(m[1]));
  return { lastSeq: seqs.at(-1) ?? -1, cards, attachments };
}

describe("an export while a turn compacts and a file is uploaded", () => {
  it.each(["json", "jsonl", "markdown"] as const)(
    "%s: carries no card or attachment from after the moment it began",
    async (format) => {
      const { key, tenantId } = await newTenantWithId();
      const id = await createConversation({ contextWindowTokens: 24_000, outputReserveTokens: 2_000 }, key);
      const att = await rowsFile({ id, name: "rows.txt", key });
      let late = "";
      let compactions = 0;
      // Held at its fold history, after the head was read: a turn reading the whole file (which
      // compacts) and a second upload land then.
      const held = envRunningBefore(/from "memory_episodes"/i, async () => {
        const calls = Array.from(
          { length: 10 },
          (_, i) => `@tool file_read {"attachment_id":"${att}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
        ).join("\n");
        const events = await sendSseEvents(id, `read all ten slices\n${calls}`, key);
        compactions = events.filter((e) => e.type === "compaction").length;
        late = await rowsFile({ id, name: "late.txt", key });
      });
      const source = await exportSourceFor(held, { tenantId, conversationId: id });
      if (!source) throw new Error("no export source");
      let text = "";
      for await (const piece of exportText(source, format)) text += piece;
      expect(compactions).toBeGreaterThan(0);
      expect(late).not.toBe("");

      // The moment: the first upload's note only.
      const got = partsOf(text, format);
      expect(got.lastSeq).toBe(1);
      expect(got.cards).toEqual([]);
      expect(got.attachments).toEqual([att]);

      // What the export left out is the conversation's now: a later export carries both.
      const now = partsOf(
        (await api("GET", `/v1/conversations/${id}/export?format=json`, undefined, { key })).text,
        "json",
      );
      expect(now.cards.some((c) => c.type === "compaction" && c.afterSeq > 1 && c.afterSeq <= now.lastSeq)).toBe(true);
      expect(now.attachments).toEqual([att, late]);
    },
  );
});

describe("an export while a turn on a retired model starts", () => {
  // Such a turn moves the conversation to the retired model's replacement and logs its
  // model_changed card before it saves its prompt: the card's afterSeq is then the export's lastSeq.
  it("carries no model_changed card of that turn, as it carries none of its messages", async () => {
    const { key, tenantId } = await newTenantWithId();
    const id = await createConversation({}, key);
    await sendSseEvents(id, "first", key);
    const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
    // Put it on a retired model, as retired-model-move-cleanup.test.ts does.
    await runInDurableObject(stub, async (_i, state) => {
      const head = JSON.parse(
        state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'head'").one().value,
      );
      head.settings = { ...head.settings, model: "claude-sonnet-4-5" };
      state.storage.sql.exec("UPDATE kv SET value = ? WHERE key = 'head'", JSON.stringify(head));
    });
    await evictDurableObject(stub);
    let changed = 0;
    const held = envRunningBefore(/from "memory_episodes"/i, async () => {
      const events = await sendSseEvents(id, "after the moment", key);
      changed = events.filter((e) => e.type === "model_changed").length;
    });
    const source = await exportSourceFor(held, { tenantId, conversationId: id });
    if (!source) throw new Error("no export source");
    let text = "";
    for await (const piece of exportText(source, "json")) text += piece;
    const parts = partsOf(text, "json");
    expect(changed).toBe(1);
    expect(parts.lastSeq).toBe(2);
    expect(parts.cards).toEqual([]);
    // The card is the conversation's all the same: an export begun now has it.
    const later = await exportSourceFor(env, { tenantId, conversationId: id });
    if (!later) throw new Error("no export source");
    let again = "";
    for await (const piece of exportText(later, "json")) again += piece;
    expect(partsOf(again, "json").cards.map((c) => c.type)).toEqual(["model_changed"]);
  });
});
