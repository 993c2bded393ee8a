// A turn's `attachments`: files uploaded earlier join the turn as their reference notes, ahead of
// the text in its user message, and activate their kind's tools; an id that is not a ready
// attachment of the tenant refuses the turn (HTTP, channels and websocket frames) with nothing saved.
import { describe, expect, it } from "vitest";
import { api, connectSocket, createConversation, newTenant, transcript } from "./helpers";
import { ofType } from "../blocks";

const upload = (id: string, name: string, body: string, key?: string) =>
  api("POST", `/v1/conversations/${id}/attachments?name=${name}`, body, {
    key,
    raw: true,
    headers: { "content-type": "text/plain" },
  });
const turn = (id: string, body: unknown, key?: string) =>
  api("POST", `/v1/conversations/${id}/messages`, body, { key });
const activeTools = async (id: string, key?: string): Promise<string[]> =>
  (await api("GET", `/v1/conversations/${id}`, undefined, { key })).json.activeTools;
const LOG = Array.from({ length: 300 }, (_, i) => `entry ${i + 1} wombat${i + 1}`).join("\n");

describe("turn attachments", () => {
  it("attach a file uploaded elsewhere as its note in the turn's user message, activating its tools", async () => {
    const key = await newTenant();
    const source = await createConversation(undefined, key);
    const up = await upload(source, "log.txt", LOG, key);
    expect(up.status).toBe(201);
    const id = await createConversation(undefined, key);
    expect(await activeTools(id, key)).not.toContain("file_read");
    const r = await turn(
      id,
      {
        content: `look at line 250\n@tool file_read {"attachment_id":"${up.json.id}","lines":"250-250"}`,
        attachments: [up.json.id],
      },
      key,
    );
    expect(r.status).toBe(200);
    const user = r.json.messages[0];
    expect(user.role).toBe("user");
    expect(user.content.map((b) => b.text)).toEqual([
      up.json.note,
      `look at line 250\n@tool file_read {"attachment_id":"${up.json.id}","lines":"250-250"}`,
    ]);
    // The tool ran (it was activated by the attachment, not refused as inactive) and read the bytes.
    const result = r.json.messages[2].content[0];
    expect(result.is_error).toBeFalsy();
    expect(result.content).toContain("entry 250 wombat250");
    expect(await activeTools(id, key)).toContain("file_read");
    expect(ofType((await transcript(id, key))[0].content[0], "text").text).toBe(up.json.note);
  });

  /** A staged file: its note held back and its tools inactive until a turn names it, then the note opens that turn's message. */
  async function expectStagedUntilNamed(id: string, key: string, staged: { id: string; note?: unknown }) {
    expect(staged.note).toMatch(/^<attachment id="att_/);
    expect(await transcript(id, key)).toEqual([]);
    expect(await activeTools(id, key)).not.toContain("file_read");
    const r = await turn(id, { content: "what is in it?", attachments: [staged.id] }, key);
    expect(r.status).toBe(200);
    const saved = await transcript(id, key);
    expect(saved[0].content.map((b) => ("text" in b ? b.text : b.type))).toEqual([staged.note, "what is in it?"]);
    expect(saved.filter((m) => m.role === "user")).toHaveLength(1);
    expect(await activeTools(id, key)).toContain("file_read");
  }

  it("a staged upload (attach=false) adds no note and activates nothing until a turn names it; attach takes only true or false", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const staged = await api("POST", `/v1/conversations/${id}/attachments?name=log.txt&attach=false`, LOG, {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(staged.status).toBe(201);
    await expectStagedUntilNamed(id, key, staged.json);
    const bad = await api("POST", `/v1/conversations/${id}/attachments?name=x.txt&attach=no`, "x", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/attach/);
  });

  it("a multipart upload completed with attach: false is staged the same way", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const start = await api("POST", `/v1/conversations/${id}/attachments/uploads`, { name: "log.txt" }, { key });
    expect(start.status).toBe(201);
    const base = `/v1/conversations/${id}/attachments/uploads/${start.json.attachmentId}` as const;
    const part = await api("PUT", `${base}/parts/1`, LOG, {
      key,
      raw: true,
      headers: { "content-type": "application/octet-stream" },
    });
    expect(part.status).toBe(200);
    const bad = await api("POST", `${base}/complete`, { parts: [part.json], attach: "no" }, { key });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(/attach/);
    const staged = await api("POST", `${base}/complete`, { parts: [part.json], attach: false }, { key });
    expect(staged.status).toBe(201);
    await expectStagedUntilNamed(id, key, staged.json);
  });

  it("with an Idempotency-Key: the same files and text replay the first turn; other files are another request (422)", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const a = (await upload(id, "a.txt", "alpha\n", key)).json.id;
    const b = (await upload(id, "b.txt", "beta\n", key)).json.id;
    const keyed = (attachments: string[]) =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: "compare", attachments },
        { key, headers: { "idempotency-key": "cmp-1" } },
      );
    const first = await keyed([a]);
    expect(first.status).toBe(200);
    const again = await keyed([a]);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    const other = await keyed([b]);
    expect(other.status).toBe(422);
    expect(other.json.error?.type).toBe("idempotency_key_reused");
    // Two upload notes, then one turn: no second turn for the repeat, nothing for the refusal.
    expect((await transcript(id, key)).filter((m) => m.role === "user")).toHaveLength(3);
  });

  it("attach a project's file by id", async () => {
    const key = await newTenant();
    const p = (await api("POST", "/v1/projects", { name: "Docs" }, { key })).json;
    const file = await api("POST", `/v1/projects/${p.id}/files?name=spec.txt`, "clause 9: keep left\n", {
      key,
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    const id = await createConversation(undefined, key);
    const r = await turn(id, { content: "what does clause 9 say?", attachments: [file.json.id] }, key);
    expect(r.status).toBe(200);
    expect(r.json.messages[0].content[0].text).toBe(file.json.note);
    expect(await activeTools(id, key)).toContain("file_read");
  });

  it("refuse unknown, malformed and other tenants' ids with a 400 naming the id; nothing is saved", async () => {
    const keyB = await newTenant();
    const theirs = await upload(await createConversation(undefined, keyB), "theirs.txt", LOG, keyB);
    const key = await newTenant();
    const mine = await upload(await createConversation(undefined, key), "mine.txt", LOG, key);
    const id = await createConversation(undefined, key);
    for (const bad of [theirs.json.id, "att_00000000000000000000000000", "../x"]) {
      const r = await turn(id, { content: "hello", attachments: [mine.json.id, bad] }, key);
      expect(r.status, bad).toBe(400);
      expect(r.json.error).toEqual({
        type: "invalid_request",
        message: `attachments: unknown attachment ${JSON.stringify(bad)}`,
      });
      const ch = await api("POST", "/v1/channels/inbox/messages", { content: "hello", attachments: [bad] }, { key });
      expect(ch.status, bad).toBe(400);
      expect(ch.json.error?.message).toContain(JSON.stringify(bad));
    }
    expect(await transcript(id, key)).toEqual([]);
    expect(await activeTools(id, key)).not.toContain("file_read");
    expect((await api("GET", "/v1/channels/inbox", undefined, { key })).status).toBe(404);
  });

  it("attach over the websocket, and refuse an unknown id there with the turnId it would have had", async () => {
    const key = await newTenant();
    const up = await upload(await createConversation(undefined, key), "log.txt", LOG, key);
    const id = await createConversation(undefined, key);
    const c = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${key}` });
    c.ws!.send(JSON.stringify({ type: "send", content: "hi", attachments: ["att_00000000000000000000000000"] }));
    const refused = await c.next((e) => e.type === "error");
    expect(refused.turnId).toMatch(/^turn_/);
    expect(refused.error.message).toBe(`attachments: unknown attachment "att_00000000000000000000000000"`);
    c.ws!.send(JSON.stringify({ type: "send", content: "now with the file", attachments: [up.json.id] }));
    const start = await c.next((e) => e.type === "turn_start");
    expect(start.turnId).not.toBe(refused.turnId);
    await c.next((e) => e.type === "turn_end");
    const saved = await transcript(id, key);
    expect(saved[0].content.map((b) => ofType(b, "text").text)).toEqual([up.json.note, "now with the file"]);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant"]);
    c.ws!.close();
  });
});
