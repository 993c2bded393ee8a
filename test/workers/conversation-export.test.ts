// GET /v1/conversations/:id/export inside workerd: the whole record (messages as stored, summary,
// fold history, compaction cards, attachment links) in three formats, and the round trip: an
// export imported again gives the same transcript, byte for byte (every field but message ids).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { api, eventually, newTenant, transcript, inConversation } from "./helpers";
import { jsonOrUndefined } from "../json-body";
import type { StoredMessage } from "../../core/types";
import type { ConversationView } from "../../services/record/conversation-head";
import type { ExportAttachment, ExportEpisode } from "../../services/transfer/export-format";
import type { ApiError } from "../route-types";

const withoutIds = (ms: StoredMessage[]) => ms.map(({ id: _id, ...rest }) => rest);
/** A JSON export as the exporter writes it (services/transfer/export-format.ts). */
interface ExportDocument {
  format: string;
  conversation: ConversationView;
  episodes: ExportEpisode[];
  cards: { type: string }[];
  attachments: ExportAttachment[];
  messages: StoredMessage[];
}
const exportOf = async (id: string, format: string, key: string) => {
  const r = await api("GET", `/v1/conversations/${id}/export?format=${format}`, undefined, { key });
  return { ...r, json: jsonOrUndefined(r.text) as ExportDocument & { error?: ApiError } };
};

let key: string;
let id: string;
let att: string;

/** A conversation with an attachment, tool calls, a compaction card and a fold: every part an export carries. */
beforeAll(async () => {
  key = await newTenant();
  const tenantId = (await env.DB.prepare(`SELECT tenant_id AS t FROM api_keys WHERE key_hash = ?`)
    .bind(
      [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join(""),
    )
    .first<{ t: string }>())!.t;
  id = (
    await api(
      "POST",
      "/v1/conversations",
      { title: "export me", settings: { contextWindowTokens: 24_000, outputReserveTokens: 2_000 } },
      { key },
    )
  ).json.id;
  const lines = Array.from({ length: 5000 }, (_, i) => `row ${i} ${"lorem ipsum dolor ".repeat(3)}`).join("\n");
  att = (
    await api("POST", `/v1/conversations/${id}/attachments?name=rows.txt`, lines, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    })
  ).json.id;
  const calls = Array.from(
    { length: 10 },
    (_, i) => `@tool file_read {"attachment_id":"${att}","lines":"${i * 500 + 1}-${i * 500 + 500}"}`,
  ).join("\n");
  expect(
    (await api("POST", `/v1/conversations/${id}/messages`, { content: `read all ten slices\n${calls}` }, { key }))
      .status,
  ).toBe(200);
  for (let i = 0; i < 4; i++)
    await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `follow-up ${i}, with \`\`\` fences \`\`\`` },
      { key },
    );
  expect(
    (
      await api(
        "PATCH",
        `/v1/conversations/${id}`,
        { settings: { foldThresholdChars: 1000, tailMessages: 2 } },
        { key },
      )
    ).status,
  ).toBe(200);
  const stub = env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
  await inConversation(stub, async (instance) => instance.fold.maybeDispatch());
  const lease = await inConversation(
    stub,
    async (_i, state) =>
      state.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").one().value,
  );
  const outcome = await runFoldJob(
    {
      kind: "fold",
      jobId: JSON.parse(lease).jobId,
      tenantId,
      conversationId: id,
      requestedAt: new Date().toISOString(),
    },
    env,
  );
  expect(outcome.applied).toBe(true);
  await eventually(async () => (await api("GET", "/v1/memory/episodes?limit=5", undefined, { key })).json.data.length);
}, 60_000);

describe("conversation export", () => {
  it("streams the complete record as JSON: messages as stored, summary, folds, cards, attachment links", async () => {
    const r = await exportOf(id, "json", key);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    const doc = r.json;
    expect(doc.format).toBe("context-chat.export/1");
    expect(doc.conversation).toMatchObject({ id, title: "export me", foldCount: 1 });
    expect(doc.conversation.summary!.length).toBeGreaterThan(0);
    expect(doc.episodes).toHaveLength(1);
    expect(doc.episodes[0]).toMatchObject({
      throughSeq: doc.conversation.summarizedThroughMessage,
      summary: doc.conversation.summary,
    });
    expect(doc.cards.some((c) => c.type === "compaction")).toBe(true);
    expect(JSON.stringify(doc.messages)).toBe(JSON.stringify(await transcript(id, key)));
    expect(doc.attachments).toEqual([
      expect.objectContaining({
        id: att,
        name: "rows.txt",
        url: `http://chat.test/v1/conversations/${id}/attachments/${att}/content`,
      }),
    ]);
    const bytes = await api("GET", new URL(doc.attachments[0].url).pathname, undefined, { key });
    expect(bytes.status).toBe(200);
    expect(bytes.text.split("\n")[4999]).toMatch(/^row 4999 /);
    expect(bytes.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''rows.txt");
  });

  it("round-trips: export, import, export again gives the same transcript byte for byte", async () => {
    for (const [format, type] of [
      ["json", "application/json"],
      ["jsonl", "application/x-ndjson"],
    ]) {
      const first = await exportOf(id, format, key);
      const imported = await api("POST", "/v1/conversations/import", first.text, {
        key,
        raw: true,
        headers: { "content-type": type },
      });
      expect(imported.status, imported.text).toBe(201);
      const again = await exportOf(imported.json.id, "json", key);
      const original = (await exportOf(id, "json", key)).json.messages;
      expect(original.length).toBeGreaterThan(10);
      // Byte-identical covers every stored field (role, content blocks, order, seq, createdAt, usage, model, stop reason); ids are new.
      expect(JSON.stringify(withoutIds(again.json.messages))).toBe(JSON.stringify(withoutIds(original)));
    }
  }, 30_000);

  it("writes JSONL with typed metadata lines and Markdown for reading", async () => {
    const jsonl = (await exportOf(id, "jsonl", key)).text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(jsonl[0]).toMatchObject({ type: "conversation", id });
    expect(jsonl.filter((l) => l.type).map((l) => l.type)).toEqual(
      expect.arrayContaining(["conversation", "episode", "card", "attachment"]),
    );
    expect(jsonl.filter((l) => !l.type).map((m) => m.seq)).toEqual((await transcript(id, key)).map((m) => m.seq));
    const md = await exportOf(id, "markdown", key);
    expect(md.headers.get("content-type")).toMatch(/text\/markdown/);
    expect(md.text).toMatch(/^# export me/);
    expect(md.text).toContain("## Summary");
    expect(md.text).toContain("## Fold history");
    expect(md.text).toContain("## Compaction cards");
    expect(md.text).toContain(`[rows.txt](http://chat.test/v1/conversations/${id}/attachments/${att}/content)`);
    expect(md.text).toContain("Tool call `file_read`");
    // Replies of a thinking model: the summarized thinking is shown as such, not mixed into the reply.
    expect(md.text).toMatch(/Thinking:\n\n```\n\S/);
    expect(md.text).toContain("follow-up 3, with ``` fences ```");
  });

  it("answers another tenant's conversation and attachment like ones that do not exist, and refuses a bad format", async () => {
    const other = await newTenant();
    const ghost = "conv_00000000000000000000000000";
    const theirs = await exportOf(id, "json", other);
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe((await exportOf(ghost, "json", other)).text);
    expect(
      (await api("GET", `/v1/conversations/${id}/attachments/${att}/content`, undefined, { key: other })).status,
    ).toBe(404);
    const bad = await exportOf(id, "pdf", key);
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/format/);
  });
});
