// A PDF's user password given to a tool: the call runs with it, and nothing stored or shown keeps
// it (the transcript's tool_use input, turn events, prompt snapshots, the cortex), nor does the
// result echo it. pdf_search takes it too, reading the locked file's pages itself.
import { env } from "cloudflare:workers";
import lockedPdf from "../fixtures/pdf/qpdf-enc-R3-V2-user-view.pdf?inline";
import { describe, expect, it } from "vitest";
import { promptSnapshotPrefix } from "../../r2-layout";
import { api, createConversation, send, sendSse, transcript, turnMessages } from "./helpers";
import { shardCount, shardRows } from "./cortex-rows";
import { blocksOf } from "../blocks";
import type { WireMessage } from "../../core/types";

const PASSWORD = "view"; // the fixture's user password (SOURCES.md)
const WITHHELD = "[password withheld]";
const bytes = () => Uint8Array.from(atob(lockedPdf.split(",")[1]), (c) => c.charCodeAt(0));
const hasPassword = (s: string) => s.includes(`"password":"${PASSWORD}"`);

async function lockedUpload(id: string): Promise<string> {
  const r = await api("POST", `/v1/conversations/${id}/attachments?name=locked.pdf`, bytes(), {
    raw: true,
    headers: { "content-type": "application/pdf" },
  });
  expect(r.json.facts).toMatchObject({ passwordRequired: true });
  return r.json.id;
}

const toolUses = (messages: WireMessage[]) =>
  messages.filter((m) => m.role === "assistant").flatMap((m) => blocksOf(m.content, "tool_use"));
const results = (r: { text: string }) =>
  turnMessages(r)[2].content.map((b) =>
    b.type === "tool_result" && typeof b.content === "string"
      ? b.content
      : JSON.stringify("content" in b ? b.content : b),
  );

describe("PDF passwords", () => {
  it("pdf_read runs with the password, but the stored call, the events, the snapshots and the cortex withhold it", async () => {
    const id = await createConversation();
    const att = await lockedUpload(id);
    const r = await send(id, `@tool pdf_read {"attachment_id":"${att}","pages":"2","password":"${PASSWORD}"}`);
    expect(results(r)[0]).toContain("Potato 1");

    const calls = toolUses(await transcript(id));
    expect(calls).toHaveLength(1);
    expect(calls[0].input).toEqual({ attachment_id: att, pages: "2", password: WITHHELD });

    const events = await sendSse(id, `@tool pdf_info {"attachment_id":"${att}","password":"${PASSWORD}"}`);
    const used = events.filter((e) => e.type === "tool_use");
    expect(used.map((e) => e.input)).toEqual([{ attachment_id: att, password: WITHHELD }]);
    expect(events.find((e) => e.type === "tool_result")?.preview).toContain("30 pages");

    // The second model call of each turn carried the call: its snapshot body must not.
    const tenant = (await env.DB.prepare(`SELECT tenant_id AS t FROM conversations WHERE id = ?`)
      .bind(id)
      .first<{ t: string }>())!.t;
    const listed = await env.BUCKET.list({ prefix: promptSnapshotPrefix(tenant, id) });
    const bodies = await Promise.all(listed.objects.map(async (o) => (await env.BUCKET.get(o.key))!.text()));
    const snapshotCalls = bodies.flatMap((b) => toolUses(JSON.parse(b).messages));
    expect(snapshotCalls.length).toBeGreaterThanOrEqual(2);
    for (const c of snapshotCalls) expect(c.input.password).toBe(WITHHELD);

    const assistantRows = await shardRows<{ body: string }>(
      `SELECT body FROM cortex_docs WHERE conversation_id = ? AND role = 'assistant'`,
      [id],
    );
    const indexed = assistantRows.map((row) => row.body).join("\n");
    expect(indexed).toContain(WITHHELD);
    expect(hasPassword(indexed)).toBe(false);
  });

  it("pdf_search asks for the password, refuses a wrong one without echoing it, and finds pages with the right one", async () => {
    const id = await createConversation();
    const att = await lockedUpload(id);
    const asked = await send(id, `@tool pdf_search {"attachment_id":"${att}","query":"Potato"}`);
    expect(asked.json.messages[2].content[0].is_error).toBe(true);
    expect(results(asked)[0]).toMatch(/encrypted; ask the user for the password and pass it as "password"/);

    const wrong = await send(
      id,
      `@tool pdf_search {"attachment_id":"${att}","query":"Potato","password":"swordfish-7"}`,
    );
    expect(wrong.json.messages[2].content[0].is_error).toBe(true);
    expect(results(wrong)[0]).toContain("the password given is wrong");
    expect(results(wrong)[0]).not.toContain("swordfish-7");

    const found = await send(
      id,
      `@tool pdf_search {"attachment_id":"${att}","query":"Potato","password":"${PASSWORD}"}`,
    );
    const text = results(found)[0];
    expect(found.json.messages[2].content[0].is_error).toBeUndefined();
    expect(text).toMatch(/pages of locked\.pdf match "Potato"/);
    expect(text).toMatch(/- page \d+: /);
    expect(text).toContain('"password":"..."');
    expect(text).not.toContain(`${PASSWORD}"`);
    // All 30 pages read here and indexed, with nothing queued that would carry the password.
    expect(
      await shardCount(`SELECT COUNT(DISTINCT ref_id) AS n FROM cortex_docs WHERE kind = 'page' AND ref_id LIKE ?`, [
        `${att}:p%`,
      ]),
    ).toBe(30);
    for (const c of toolUses(await transcript(id))) expect(c.input.password ?? WITHHELD).toBe(WITHHELD);
  });
});
