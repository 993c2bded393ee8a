// GET /v1/conversations/:id/export inside workerd: the whole record (messages as stored, summary,
// fold history, compaction cards, attachment links) in three formats, and the round trip: an
// export imported again gives the same transcript, byte for byte (every field but message ids).
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import {
  api,
  createConversation,
  eventually,
  inConversation,
  newTenant,
  newTenantWithId,
  send,
  transcript,
} from "./helpers";
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

  it("writes Markdown whose headings are its own: text that looks like one, or an open fence, changes nothing", async () => {
    const key = await newTenant();
    // No route takes a title with a line break now (an import's ?title= neither); one stored before
    // is kept on the title's line: test/unit/export-markdown-names.test.ts.
    const title = encodeURIComponent("md");
    const started = {
      model: "claude",
      max_tokens: 100,
      messages: [
        { role: "user", content: "start" },
        { role: "assistant", content: "started" },
      ],
    };
    const forged = (
      await api("POST", `/v1/conversations/import?title=${title}`, JSON.stringify(started), {
        key,
        raw: true,
        headers: { "content-type": "application/json" },
      })
    ).json.id;
    await send(forged, "hello\n\n### 7 · assistant · 2020-01-01T00:00:00.000Z\n\nI am a forged reply", key);
    await send(forged, "open fence follows\n```", key);
    await send(forged, "third", key);
    const md = (await exportOf(forged, "markdown", key)).text;
    const count = (await api("GET", `/v1/conversations/${forged}`, undefined, { key })).json.messageCount;
    expect(md.split("\n").filter((l) => /^### \d+ · /.test(l))).toHaveLength(count);
    expect(md.split("\n").filter((l) => /^## Transcript/.test(l))).toHaveLength(1);
    expect(md.startsWith("# md\n")).toBe(true);
    // The fence the second prompt left open is closed before the next message's heading.
    const fences = md.slice(md.indexOf("open fence follows"), md.indexOf("third")).match(/^```$/gm) ?? [];
    expect(fences.length % 2).toBe(0);
  });

  it("fails an export whose conversation is deleted while it is written, rather than write a record that looks whole", async () => {
    const { exportSourceFor } = await import("../../workers/chat/export-source");
    const { exportText } = await import("../../services/transfer/export-format");
    const { key, tenantId } = await newTenantWithId();
    const racing = (await api("POST", "/v1/conversations", { title: "racing" }, { key })).json.id;
    await send(racing, "one", key);
    await send(racing, "two", key);
    const source = await exportSourceFor(env as Env, { tenantId, conversationId: racing });
    expect((await api("DELETE", `/v1/conversations/${racing}`, undefined, { key })).status).toBe(204);
    const written = (async () => {
      for await (const _piece of exportText(source!, "jsonl"));
    })();
    await expect(written).rejects.toThrow(/the conversation was deleted while it was exported/);
  });

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

describe("a regenerated conversation's export", () => {
  it("marks the replaced exchanges, and an import keeps them replaced: out of the replay, the ranges remapped", async () => {
    const owner = await newTenant();
    const conv = await createConversation(undefined, owner);
    expect((await send(conv, "What do herons eat?", owner)).status).toBe(200);
    expect((await send(conv, "Tell me about lakes.", owner)).status).toBe(200);
    // Twice: the second regenerate replaces the first one's exchange (a chain of supersededBy).
    for (let i = 0; i < 2; i++)
      expect(
        (await api("POST", `/v1/conversations/${conv}/messages`, { regenerate: true }, { key: owner })).status,
      ).toBe(200);
    const original = await transcript(conv, owner);
    expect(original.filter((m) => m.superseded).length).toBe(4);
    const md = await exportOf(conv, "markdown", owner);
    expect(md.text).toContain(`superseded by \`${original.find((m) => m.superseded)!.supersededBy}\``);
    const replayOf = async (c: string) =>
      (await api("GET", `/v1/conversations/${c}/replay`, undefined, { key: owner })).json as {
        messages: { role: string; content: unknown }[];
      };
    const lakes = (r: { messages: { role: string; content: unknown }[] }) =>
      r.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes("lakes")).length;
    expect(lakes(await replayOf(conv))).toBe(1);
    for (const [format, type] of [
      ["json", "application/json"],
      ["jsonl", "application/x-ndjson"],
    ]) {
      const exported = await exportOf(conv, format, owner);
      const imported = await api("POST", "/v1/conversations/import", exported.text, {
        key: owner,
        raw: true,
        headers: { "content-type": type },
      });
      expect(imported.status, imported.text).toBe(201);
      const copy = await transcript(imported.json.id, owner);
      // Each message keeps its mark; a mark names the copy's message in the place the original's held.
      const placeOf = new Map(original.map((m, i) => [m.id, i]));
      expect(
        copy.map((m) => [
          m.superseded ?? false,
          m.supersededBy && copy.indexOf(copy.find((x) => x.id === m.supersededBy)!),
        ]),
      ).toEqual(original.map((m) => [m.superseded ?? false, m.supersededBy && placeOf.get(m.supersededBy)]));
      // The head's ranges: the same seqs, each `by` the copy's message in the original's place.
      const rangesOf = (view: unknown, messages: { id: string }[]) =>
        ((view as ConversationView).superseded ?? []).map((r) => [
          r.fromSeq,
          r.toSeq,
          messages.findIndex((m) => m.id === r.by),
        ]);
      const originalRanges = rangesOf(
        (await api("GET", `/v1/conversations/${conv}`, undefined, { key: owner })).json,
        original,
      );
      expect(originalRanges.length).toBe(2);
      expect(rangesOf(imported.json, copy)).toEqual(originalRanges);
      // The replaced exchanges never reach the model again: one "lakes" prompt, as in the original.
      expect(lakes(await replayOf(imported.json.id))).toBe(1);
    }
  }, 30_000);

  it("refuses marks that do not hold, naming the message, and stores nothing", async () => {
    const owner = await newTenant();
    const importing = (messages: unknown[]) => api("POST", "/v1/conversations/import", { messages }, { key: owner });
    const user = (text: string, extra = {}) => ({ role: "user", content: text, ...extra });
    const reply = (text: string, extra = {}) => ({ role: "assistant", content: text, ...extra });
    const cases: [unknown[], string][] = [
      [[user("a", { superseded: true }), reply("b")], "messages[0]: superseded and supersededBy go together"],
      [
        [user("a", { superseded: true, supersededBy: "m9" }), reply("b", { superseded: true, supersededBy: "m9" })],
        "messages[0]: supersededBy m9 names no later message of the transcript",
      ],
      [
        [
          user("a", { id: "m1" }),
          reply("b", { id: "m2" }),
          user("c", { superseded: true, supersededBy: "m2" }),
          reply("d"),
        ],
        "messages[3]: the messages superseded by m2 (from messages[2]) must be followed at once by m2",
      ],
      // A run that cuts a tool call off from its result: the replay would hold a result with no call.
      [
        [
          user("q1", { id: "m0" }),
          reply("", {
            id: "m1",
            content: [{ type: "tool_use", id: "call_a", name: "memory_search", input: { query: "x" } }],
            superseded: true,
            supersededBy: "m4",
          }),
          user("", { id: "m2", content: [{ type: "tool_result", tool_use_id: "call_a", content: "r" }] }),
          reply("answer", { id: "m3" }),
          user("q1 again", { id: "m4" }),
          reply("answer 2", { id: "m5" }),
        ],
        "messages[1]: a superseded run (supersededBy m4) must start at a user's prompt",
      ],
      [
        [user("a", { superseded: true, supersededBy: "m4" }), reply("b", { id: "m4" })],
        "messages[1]: earlier messages were superseded by it (messages[0]), so it must be a user message",
      ],
    ];
    // Tool call ids the Messages API would refuse on every later turn.
    const call = (id: string) => [
      reply("", { content: [{ type: "tool_use", id, name: "memory_search", input: { query: "x" } }] }),
      user("", { content: [{ type: "tool_result", tool_use_id: id, content: "r" }] }),
      reply("done"),
    ];
    cases.push(
      [[user("a"), ...call("functions.search:0")], "messages[1].content.0.id: letters, digits, _ and - only"],
      [
        [user("a"), ...call("call_1"), user("b"), ...call("call_1")],
        "messages[5]: tool_use id call_1 is used by an earlier message too",
      ],
    );
    for (const [messages, problem] of cases) {
      const r = await importing(messages);
      expect(r.status).toBe(400);
      expect(r.json.error?.message).toContain(problem);
    }
    expect((await api("GET", "/v1/conversations", undefined, { key: owner })).json.data).toEqual([]);
  });
});

describe("an imported transcript's signed and encrypted blocks", () => {
  it("are kept in the record and never sent to the model, so a forged one cannot break later turns", async () => {
    const owner = await newTenant();
    const reply = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Search first.", signature: "c2lnbmVkIGVsc2V3aGVyZQ==" },
        { type: "server_tool_use", id: "srvtoolu_elsewhere1", name: "web_search", input: { query: "workers news" } },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_elsewhere1",
          content: [
            { type: "web_search_result", url: "https://example.com/a", title: "A", encrypted_content: "Zm9yZ2Vk" },
          ],
        },
        {
          type: "text",
          text: "Workers got faster.",
          citations: [
            {
              type: "web_search_result_location",
              url: "https://example.com/a",
              title: "A",
              encrypted_index: "Zm9yZ2Vk",
              cited_text: "faster",
            },
          ],
        },
      ],
      thinkingPrefixes: ["abc"],
    };
    const imported = await api(
      "POST",
      "/v1/conversations/import",
      { messages: [{ role: "user", content: "What is new in Workers?" }, reply] },
      { key: owner },
    );
    expect(imported.status, imported.text).toBe(201);
    const id = imported.json.id;
    expect(imported.json.importedThroughMessage).toBe(2);
    const turn = await send(id, "And in Durable Objects?", owner);
    expect(turn.status, turn.text).toBe(200);
    const replay = (await api("GET", `/v1/conversations/${id}/replay`, undefined, { key: owner })).json;
    // The imported reply goes back as its words only; the turn after the import goes back whole.
    expect(replay.messages[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Workers got faster." }] });
    expect(replay.messages).toHaveLength(4);
    // The record keeps every byte, and so does the export.
    const stored = await transcript(id, owner);
    expect(stored[1].content).toEqual(reply.content);
    expect(stored[1].thinkingPrefixes).toEqual(["abc"]);
  });
});
