// An import's Idempotency-Key: a retried POST /v1/conversations/import answers the conversation the
// first one made (never a second), another transcript under the key is refused; POST …/:id/import
// cannot be made idempotent, so it refuses the key rather than ignore it and append twice.
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenantWithId, transcript } from "./helpers";

const exchange = [
  { role: "user", content: "What do herons eat?" },
  { role: "assistant", content: "Mostly fish." },
];
/** An import's answer: the conversation, or the error. */
type ImportAnswer = { id: string; error: { type: string; message: string } };
const importing = async (body: string, opts: { key: string; idempotencyKey: string; query?: string }) => {
  const r = await api("POST", `/v1/conversations/import${opts.query ?? ""}`, body, {
    key: opts.key,
    raw: true,
    headers: { "content-type": "application/json", "idempotency-key": opts.idempotencyKey },
  });
  return { ...r, json: r.json as unknown as ImportAnswer };
};

describe("POST /v1/conversations/import with an Idempotency-Key", () => {
  it("answers a retry with the conversation the first import made, marked replayed", async () => {
    const { key } = await newTenantWithId();
    const body = JSON.stringify({ messages: exchange });
    const first = await importing(body, { key, idempotencyKey: "import-once-1" });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await importing(body, { key, idempotencyKey: "import-once-1" });
    expect(again.status, again.text).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    const listed = await api("GET", "/v1/conversations?limit=100", undefined, { key });
    expect(listed.json.data.filter((c: { id: string }) => c.id === first.json.id).length).toBe(1);
    expect(listed.json.data.length).toBe(1);
    expect((await transcript(first.json.id, key)).length).toBe(2);
  });

  it("refuses another transcript, or another title, under the same key, and a create's key", async () => {
    const { key } = await newTenantWithId();
    const first = await importing(JSON.stringify({ messages: exchange }), { key, idempotencyKey: "import-once-2" });
    expect(first.status, first.text).toBe(201);
    const other = JSON.stringify({ messages: [...exchange, ...exchange] });
    const reused = await importing(other, { key, idempotencyKey: "import-once-2" });
    expect(reused.status, reused.text).toBe(422);
    expect(reused.json.error.type).toBe("idempotency_key_reused");
    const retitled = await importing(JSON.stringify({ messages: exchange }), {
      key,
      idempotencyKey: "import-once-2",
      query: "?title=Other",
    });
    expect(retitled.status, retitled.text).toBe(422);
    // One key space with POST /v1/conversations: a create's key is not an import's.
    const created = await api(
      "POST",
      "/v1/conversations",
      { title: "t" },
      { key, headers: { "idempotency-key": "k3" } },
    );
    expect(created.status).toBe(201);
    const crossed = await importing(JSON.stringify({ messages: exchange }), { key, idempotencyKey: "k3" });
    expect(crossed.status, crossed.text).toBe(422);
    const listed = await api("GET", "/v1/conversations?limit=100", undefined, { key });
    expect(listed.json.data.length).toBe(2);
  });

  it("refuses a malformed key before reading the body", async () => {
    const { key } = await newTenantWithId();
    const bad = await importing(JSON.stringify({ messages: exchange }), { key, idempotencyKey: "k".repeat(256) });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^Idempotency-Key:/);
  });
});

describe("POST /v1/conversations/:id/import with an Idempotency-Key", () => {
  it("is refused naming the header, and nothing is appended", async () => {
    const { key } = await newTenantWithId();
    const conv = await createConversation(undefined, key);
    const messages = [
      { role: "user", text: "hi" },
      { role: "assistant", text: "hello" },
    ];
    for (let i = 0; i < 2; i++) {
      const r = await api(
        "POST",
        `/v1/conversations/${conv}/import`,
        { messages },
        { key, headers: { "idempotency-key": "import-once-1" } },
      );
      expect(r.status, r.text).toBe(400);
      expect(r.json.error?.message).toMatch(/^Idempotency-Key:/);
    }
    expect((await transcript(conv, key)).length).toBe(0);
    // Without a key it appends, as before.
    const plain = await api("POST", `/v1/conversations/${conv}/import`, { messages }, { key });
    expect(plain.status, plain.text).toBe(201);
    expect((await transcript(conv, key)).length).toBe(2);
  });
});
