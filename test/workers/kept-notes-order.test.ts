// Notes a failed write after a paused step's results kept: a file uploaded later never gets its note
// ahead of them, and the next turn writes them as attachment notes, not as messages of its own.
import { describe, expect, it } from "vitest";
import { keptNote, upload } from "./kept-notes";
import { connectSocket, DEV_KEY, send, textOf, transcript } from "./helpers";

/** A message's text, as loosely typed as the answer and the socket frames give it. */
const said = (m: { content: readonly { type: string; text?: unknown }[] }): string =>
  m.content.map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");

const noteOf = (all: readonly { role: string; content: { type: string; text?: unknown }[] }[], name: string) =>
  all.findIndex((m) => m.role === "user" && said(m).includes(name));

describe("notes kept by a failed write after a paused step", () => {
  it("stay ahead of a file uploaded later, and the next turn's messages start with its user message", async () => {
    const { id } = await keptNote({ name: "first.txt" });
    expect((await upload(id, "second.txt", "line two")).status).toBe(201);
    const next = await send(id, "after the outage");
    expect(next.status).toBe(200);
    const all = await transcript(id);
    const first = noteOf(all, "first.txt");
    const second = noteOf(all, "second.txt");
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    expect(all.filter((m) => textOf(m).includes("first.txt") || textOf(m).includes("second.txt"))).toHaveLength(2);
    expect(textOf(all[second + 1])).toContain("after the outage");
    const messages = next.json.messages;
    expect(messages[0]?.role).toBe("user");
    expect(said(messages[0]!)).toContain("after the outage");
    expect(messages.some((m) => said(m).includes("first.txt") || said(m).includes("second.txt"))).toBe(false);
  });

  it("reach the sockets as attachment notes when the next turn writes them", async () => {
    const { id } = await keptNote({ name: "first.txt" });
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: `Bearer ${DEV_KEY}` });
    expect(sock.status).toBe(101);
    expect((await send(id, "after the outage")).status).toBe(200);
    const note = await sock.next((e) => e.type === "message" && said(e.message).includes("first.txt"));
    expect(note).toMatchObject({ type: "message", turnId: "attachment" });
    sock.ws?.close();
  });
});
