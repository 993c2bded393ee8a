// A turn's note writes (memory_save, memory_forget) are D1 writes the conversation's object makes
// during the turn, before its reply: the turn's answer covers them. A JSON answer's x-d1-bookmark is
// at or after where they reached; an SSE stream's headers are sent before the turn runs, so its
// `turn_end` carries the position (`d1Bookmark`). Locally there is only the primary, so "a replica
// at the answered bookmark sees the note" is checked as "the answered bookmark is at or after the
// primary's position right after the note's statement" (bookmarks order as strings).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { watchWrites } from "./d1-watch";
import { api, newTenant } from "./helpers";

/** The statements that write a memory note. */
const NOTE_WRITE = /^(insert into|update|delete from) "memory_notes"/i;

const conversationStub = (id: string) =>
  env.CONVERSATION.get(env.CONVERSATION.idFromName(id)) as unknown as DurableObjectStub;

function expectCovers(answered: string | null | undefined, reached: string | null): void {
  expect(reached, "the turn wrote no note").toBeTruthy();
  expect(answered, "no bookmark answered").toBeTruthy();
  expect(answered! >= reached!, `answered ${answered}, the note writes reached ${reached}`).toBe(true);
}

const SAVE = '@tool memory_save {"title":"pin","text":"the vault pin is quasarzebra"}';

/** A new conversation, and the bookmark its create answered. */
async function conversation(key: string): Promise<{ id: string; bookmark: string }> {
  const made = await api("POST", "/v1/conversations", { title: "notes" }, { key });
  expect(made.status).toBe(201);
  return { id: made.json.id, bookmark: made.headers.get("x-d1-bookmark")! };
}

describe("a turn's note writes are covered by what the turn answers", () => {
  it("a JSON turn's x-d1-bookmark covers its memory_save and memory_forget, and a read sent with it finds the note", async () => {
    const key = await newTenant();
    const { id, bookmark } = await conversation(key);
    const watched = await watchWrites(conversationStub(id), { only: NOTE_WRITE });
    try {
      const saved = await api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: SAVE },
        { key, headers: { "x-d1-bookmark": bookmark } },
      );
      expect(saved.status, saved.text).toBe(200);
      const answered = saved.headers.get("x-d1-bookmark");
      expectCovers(answered, watched.reached());
      const noteId = /mem_[0-9A-Z]{26}/.exec(saved.text)![0];
      const listed = await api("GET", "/v1/memory?limit=10", undefined, {
        key,
        headers: { "x-d1-bookmark": answered! },
      });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.text).toContain(noteId);

      const forgot = await api(
        "POST",
        `/v1/conversations/${id}/messages`,
        {
          content: `@tools-per-step 1\n@tool tool_activate {"name":"memory_forget"}\n@tool memory_forget {"id":"${noteId}"}`,
        },
        { key, headers: { "x-d1-bookmark": answered! } },
      );
      expect(forgot.status, forgot.text).toBe(200);
      expect(forgot.text).toContain(`deleted note ${noteId}`);
      expectCovers(forgot.headers.get("x-d1-bookmark"), watched.reached());
    } finally {
      await watched.stop();
    }
  });

  it("POST …/tool-results: the resumed turn's memory_save is covered by its answer", async () => {
    const key = await newTenant();
    const { id, bookmark } = await conversation(key);
    const weather = {
      name: "get_weather",
      description: "The weather in a city",
      input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    };
    const paused = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: `@tools-per-step 1\n@tool get_weather {"city":"Paris"}\n${SAVE}`, tools: [weather] },
      { key, headers: { "x-d1-bookmark": bookmark } },
    );
    expect(paused.status, paused.text).toBe(200);
    const [call] = paused.json.requires_action!.calls;
    const watched = await watchWrites(conversationStub(id), { only: NOTE_WRITE });
    try {
      const resumed = await api(
        "POST",
        `/v1/conversations/${id}/tool-results`,
        { results: [{ tool_use_id: call.id, content: "fine, 21 C" }] },
        { key, headers: { "x-d1-bookmark": paused.headers.get("x-d1-bookmark")! } },
      );
      expect(resumed.status, resumed.text).toBe(200);
      expect(resumed.text).toMatch(/mem_[0-9A-Z]{26}/);
      expectCovers(resumed.headers.get("x-d1-bookmark"), watched.reached());
    } finally {
      await watched.stop();
    }
  });

  it("an SSE turn's turn_end carries d1Bookmark, at or after its memory_save; a turn that wrote no note carries none", async () => {
    const key = await newTenant();
    const { id, bookmark } = await conversation(key);
    const watched = await watchWrites(conversationStub(id), { only: NOTE_WRITE });
    const turnEnd = async (content: string) => {
      const r = await api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content },
        { key, headers: { accept: "text/event-stream", "x-d1-bookmark": bookmark } },
      );
      expect(r.status).toBe(200);
      const end = [...r.text.matchAll(/^event: turn_end\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]))[0];
      expect(end).toBeTruthy();
      return end as { d1Bookmark?: string };
    };
    try {
      expectCovers((await turnEnd(SAVE)).d1Bookmark, watched.reached());
      expect(await turnEnd("just a hello")).not.toHaveProperty("d1Bookmark");
    } finally {
      await watched.stop();
    }
  });
});
