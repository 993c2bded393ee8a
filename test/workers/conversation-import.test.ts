// POST /v1/conversations/:id/import: verbatim history, no model call, indexed like any turn,
// whole exchanges only, tenant-scoped.
import { describe, expect, it } from "vitest";
import { api, createConversation, eventually, newTenant, send, textOf, transcript } from "./helpers";

const exchange = (u: string, a: string) => [
  { role: "user", text: u },
  { role: "assistant", text: a },
];

describe("conversation import", () => {
  it("appends the messages verbatim, in order, and the cortex finds them", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await api(
      "POST",
      `/v1/conversations/${id}/import`,
      {
        messages: [
          ...exchange("Invoice INV-4471 is 318.40 EUR.", "Noted the invoice."),
          ...exchange("second", "reply two"),
        ],
      },
      { key },
    );
    expect(r.status).toBe(201);
    expect(r.json.messages.map((m) => [m.seq, m.role])).toEqual([
      [1, "user"],
      [2, "assistant"],
      [3, "user"],
      [4, "assistant"],
    ]);
    const msgs = await transcript(id, key);
    expect(msgs.map(textOf)).toEqual(["Invoice INV-4471 is 318.40 EUR.", "Noted the invoice.", "second", "reply two"]);
    const hit = await eventually(
      async () => (await api("GET", "/v1/search?q=INV-4471", undefined, { key })).json.data[0],
    );
    expect(hit.messageId).toBe(r.json.messages[0].id);
    // A turn after an import continues the numbering and still alternates.
    const turn = await send(id, "and now a live turn", key);
    expect(turn.status).toBe(200);
    expect(turn.json.messages[0].seq).toBe(5);
  });

  it("refuses what is not whole exchanges, naming the problem, and writes nothing", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    for (const messages of [
      [{ role: "user", text: "alone" }],
      [...exchange("a", "b"), { role: "user", text: "c" }],
      [
        { role: "assistant", text: "x" },
        { role: "user", text: "y" },
      ],
      exchange("", "b"),
      [
        { role: "system", text: "x" },
        { role: "assistant", text: "y" },
      ],
    ]) {
      const r = await api("POST", `/v1/conversations/${id}/import`, { messages }, { key });
      expect(r.status, JSON.stringify(messages)).toBe(400);
      expect(r.json.error?.message).toMatch(/messages|text|role/);
    }
    expect(await transcript(id, key)).toEqual([]);
  });

  it("takes exchanges of the longest texts the rules allow, and names the body limit past it", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    // 20 messages of 100,000 characters: about 2 MB, far past the 256 KiB of other JSON bodies.
    const long = (n: number) => `${n} `.padEnd(100_000, "x");
    const messages = Array.from({ length: 10 }, (_, i) => exchange(long(2 * i), long(2 * i + 1))).flat();
    const r = await api("POST", `/v1/conversations/${id}/import`, { messages }, { key });
    expect(r.status).toBe(201);
    expect(r.json.messages).toHaveLength(20);
    const over = await api(
      "POST",
      `/v1/conversations/${id}/import`,
      { messages: exchange("a".repeat(13 * 1024 * 1024), "b") },
      { key },
    );
    expect(over.status).toBe(413);
    expect(over.json.error).toEqual({
      type: "payload_too_large",
      message: `request body larger than ${12 * 1024 * 1024} bytes`,
    });
    expect((await transcript(id, key)).length).toBe(20);
  });

  it("answers another tenant's conversation exactly like one that does not exist", async () => {
    const owner = await newTenant();
    const other = await newTenant();
    const id = await createConversation(undefined, owner);
    const body = { messages: exchange("planted by another tenant", "ok") };
    const theirs = await api("POST", `/v1/conversations/${id}/import`, body, { key: other });
    const nowhere = await api("POST", `/v1/conversations/conv_00000000000000000000000000/import`, body, { key: other });
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual(nowhere.json);
    expect(await transcript(id, owner)).toEqual([]);
  });
});
