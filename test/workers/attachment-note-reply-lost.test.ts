// An upload whose note RPC to the conversation object fails (its reply lost after the object saved
// the note, or the call lost before it ran) never leaves a note of a deleted file: the file is
// kept, ready, listed and deletable, and the answer is a 502 naming its id.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ConversationDO } from "../../durable-objects/conversation/conversation-do";
import { app } from "../../workers/chat/app";
import { api, createConversation, newTenant, transcript } from "./helpers";

type Loss = "after" | "before";

/** The conversation namespace whose stubs' addAttachmentNote fails: after the real call ran, or instead of it. */
function noteReplyLost(loss: Loss): DurableObjectNamespace<ConversationDO> {
  const real = env.CONVERSATION;
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "get")
        return (id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => {
          const stub = target.get(id, options);
          return new Proxy(stub, {
            get(s, p) {
              if (p !== "addAttachmentNote") return Reflect.get(s, p);
              return async (...args: Parameters<ConversationDO["addAttachmentNote"]>) => {
                if (loss === "after") await s.addAttachmentNote(...args);
                throw new Error("Network connection lost.");
              };
            },
          });
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function fetchWith(loss: Loss, path: string, init: { key: string; method: string; body: string; type: string }) {
  const ctx = createExecutionContext();
  const req = new Request(`http://chat.test${path}`, {
    method: init.method,
    headers: {
      authorization: `Bearer ${init.key}`,
      "content-type": init.type,
      "content-length": String(new TextEncoder().encode(String(init.body)).length),
    },
    body: init.body,
  });
  const res = await app.fetch(req, { ...env, CONVERSATION: noteReplyLost(loss) } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as { error: { type: string; message: string } } };
}

const notesIn = async (id: string, key: string) =>
  (await transcript(id, key)).filter((m) => JSON.stringify(m.content).includes("<attachment id="));

/** The kept file: listed, got, its bytes served, then deleted. */
async function expectKept(conv: string, opts: { key: string; id: string; body: string }) {
  const { key, id, body } = opts;
  const list = await api("GET", `/v1/conversations/${conv}/attachments`, undefined, { key });
  expect(list.json.data.map((a: { id: string }) => a.id)).toEqual([id]);
  expect((await api("GET", `/v1/conversations/${conv}/attachments/${id}`, undefined, { key })).status).toBe(200);
  const content = await api("GET", `/v1/conversations/${conv}/attachments/${id}/content`, undefined, { key });
  expect(content.text).toBe(body);
  expect((await api("DELETE", `/v1/conversations/${conv}/attachments/${id}`, undefined, { key })).status).toBe(204);
  expect((await api("GET", `/v1/conversations/${conv}/attachments`, undefined, { key })).json.data).toEqual([]);
}

const BODY = "line one\nline two\n";

describe("an upload whose note reply is lost", () => {
  for (const loss of ["after", "before"] as const) {
    it(`keeps the file and answers 502 with its id (reply lost ${loss} the note was saved)`, async () => {
      const key = await newTenant();
      const conv = await createConversation(undefined, key);
      const r = await fetchWith(loss, `/v1/conversations/${conv}/attachments?name=notes.txt`, {
        key,
        method: "POST",
        body: BODY,
        type: "text/plain",
      });
      expect(r.status).toBe(502);
      expect(r.json.error.type).toBe("storage_error");
      const id = /\batt_[0-9A-Z]{26}\b/.exec(r.json.error.message)?.[0];
      expect(id, r.json.error.message).toBeDefined();
      expect(r.json.error.message).toMatch(/is kept/);
      const notes = await notesIn(conv, key);
      expect(notes.length).toBe(loss === "after" ? 1 : 0);
      if (loss === "after") expect(JSON.stringify(notes[0].content)).toContain(`<attachment id=\\"${id}\\"`);
      if (loss === "before") {
        // The kept file is a finished upload: a turn naming it brings its note.
        const turn = await api(
          "POST",
          `/v1/conversations/${conv}/messages`,
          { content: "read it", attachments: [id] },
          { key },
        );
        expect(turn.status).toBe(200);
        expect((await notesIn(conv, key)).length).toBe(1);
      }
      await expectKept(conv, { key, id: id as string, body: BODY });
    });
  }

  it("keeps a multipart upload's file the same way at complete", async () => {
    const key = await newTenant();
    const conv = await createConversation(undefined, key);
    const started = await api("POST", `/v1/conversations/${conv}/attachments/uploads`, { name: "big.txt" }, { key });
    expect(started.status).toBe(201);
    const att = started.json.attachmentId as string;
    const part = await api("PUT", `/v1/conversations/${conv}/attachments/uploads/${att}/parts/1`, BODY, {
      key,
      raw: true,
    });
    expect(part.status).toBe(200);
    const r = await fetchWith("after", `/v1/conversations/${conv}/attachments/uploads/${att}/complete`, {
      key,
      method: "POST",
      body: JSON.stringify({ parts: [{ partNumber: 1, etag: part.json.etag }] }),
      type: "application/json",
    });
    expect(r.status).toBe(502);
    expect(r.json.error.message).toContain(att);
    expect((await notesIn(conv, key)).length).toBe(1);
    await expectKept(conv, { key, id: att, body: BODY });
  });
});
