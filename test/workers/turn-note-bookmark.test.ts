// A turn's note writes (memory_save, memory_forget) are D1 writes the conversation's object makes
// during the turn, before its reply: the turn's answer covers them. A JSON answer's x-d1-bookmark is
// at or after where they reached; an SSE stream's headers are sent before the turn runs, so its
// `turn_end` carries the position (`d1Bookmark`). Locally there is only the primary, so "a replica
// at the answered bookmark sees the note" is checked as "the answered bookmark is at or after the
// primary's position right after the note's statement" (bookmarks order as strings).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, newTenant } from "./helpers";

interface WithEnv {
  env: Env;
}
const inObject = runInDurableObject as unknown as <R>(
  stub: DurableObjectStub,
  fn: (instance: WithEnv) => Promise<R>,
) => Promise<R>;

/** The primary's position before a probe read there (the probe's own step taken off). */
async function primaryNow(db: D1Database): Promise<string> {
  const s = db.withSession("first-primary");
  await s.prepare("SELECT 1").first();
  const [head, count, ...rest] = s.getBookmark()!.split("-");
  return [head, (Number.parseInt(count, 16) - 1).toString(16).padStart(count.length, "0"), ...rest].join("-");
}

/**
 * Watches the object's D1 (on its binding or through any session it opens): after each statement on
 * memory_notes, the primary's position is taken, so `reached()` is where the note writes got to.
 */
async function watchNoteWrites(stub: DurableObjectStub): Promise<{ reached(): string | null; stop(): Promise<void> }> {
  const positions: string[] = [];
  const real = await inObject(stub, async (instance) => {
    const before = instance.env;
    const db = before.DB;
    const statement = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement =>
      new Proxy(stmt, {
        get(target, prop) {
          const v: unknown = Reflect.get(target, prop);
          if (typeof v !== "function") return v;
          if (prop === "bind") return (...a: unknown[]) => statement(target.bind(...a), sql);
          if (["run", "all", "raw", "first"].includes(String(prop)))
            return async (...a: unknown[]) => {
              const out = await (v as (...x: unknown[]) => Promise<unknown>).apply(target, a);
              if (/^(insert into|update|delete from) "memory_notes"/i.test(sql)) positions.push(await primaryNow(db));
              return out;
            };
          return (v as (...x: unknown[]) => unknown).bind(target);
        },
      });
    const wrap = <T extends D1Database | D1DatabaseSession>(target: T): T =>
      new Proxy(target, {
        get(t, prop) {
          if (prop === "prepare") return (sql: string) => statement(t.prepare(sql), sql);
          if (prop === "withSession" && "withSession" in t) return (start?: string) => wrap(t.withSession(start));
          const v: unknown = Reflect.get(t, prop);
          return typeof v === "function" ? (v as (...x: unknown[]) => unknown).bind(t) : v;
        },
      });
    instance.env = { ...before, DB: wrap(db) };
    return before;
  });
  return {
    reached: () => positions.reduce<string | null>((max, p) => (max === null || p > max ? p : max), null),
    stop: () =>
      inObject(stub, async (instance) => {
        instance.env = real;
      }),
  };
}

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
    const watched = await watchNoteWrites(conversationStub(id));
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
    const watched = await watchNoteWrites(conversationStub(id));
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
    const watched = await watchNoteWrites(conversationStub(id));
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
