// Media types are case-insensitive (RFC 9110 §8.3.1): `Accept: Text/Event-Stream` streams a turn as
// `text/event-stream` does. JSON bodies must be UTF-8 (RFC 8259 §8.1): a Content-Type naming another
// charset is a 415 before anything is read or written, and bytes that are not UTF-8 are a 400.
import { describe, expect, it } from "vitest";
import { api, createConversation, importText, newTenant, sseEventsOf, transcript } from "./helpers";

const latin1 = (text: string) => Uint8Array.from(text, (ch) => ch.charCodeAt(0));

const conversationCount = async (key: string) => {
  const r = await api("GET", "/v1/conversations", undefined, { key });
  expect(r.status).toBe(200);
  return r.json.data.length;
};

describe("Accept is matched without regard to case", () => {
  it("streams a turn for Accept: Text/Event-Stream", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await api(
      "POST",
      `/v1/conversations/${id}/messages`,
      { content: "hello" },
      { key, headers: { accept: "Text/Event-Stream" } },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const types = sseEventsOf(r.text).map((e) => e.type);
    expect(types[0]).toBe("turn_start");
    expect(types).toContain("turn_end");
  });

  it("streams among several ranges, and answers JSON for application/json, for none, and for a refused event-stream", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const ask = (accept?: string) =>
      api(
        "POST",
        `/v1/conversations/${id}/messages`,
        { content: "hi" },
        { key, headers: accept === undefined ? {} : { accept } },
      );
    const listed = await ask("application/json;q=0.5, TEXT/EVENT-STREAM");
    expect(listed.headers.get("content-type")).toMatch(/^text\/event-stream/);
    for (const accept of ["application/json", undefined, "text/event-stream;q=0, application/json"]) {
      const r = await ask(accept);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(r.json.stop_reason).toBe("end_turn");
    }
  });
});

describe("a JSON body's charset", () => {
  it("refuses a Latin-1 body with 415 naming the charset, and creates nothing", async () => {
    const key = await newTenant();
    for (const charset of ["iso-8859-1", '"Windows-1252"']) {
      const r = await api("POST", "/v1/conversations", latin1('{"title":"café"}'), {
        key,
        raw: true,
        headers: { "content-type": `application/json; charset=${charset}` },
      });
      expect(r.status).toBe(415);
      expect(r.json.error?.type).toBe("unsupported_media_type");
      expect(r.json.error?.message).toContain(charset.replaceAll('"', ""));
      expect(r.json.error?.message).toContain("UTF-8");
    }
    // Bytes that happen to be valid UTF-8 ("Ã©" in Latin-1) are refused by the label, not misread.
    const misread = await api("POST", "/v1/conversations", latin1('{"title":"cafÃ©"}'), {
      key,
      raw: true,
      headers: { "content-type": "application/json; charset=ISO-8859-1" },
    });
    expect(misread.status).toBe(415);
    expect(await conversationCount(key)).toBe(0);
  });

  it("refuses a turn in another charset before it runs", async () => {
    const key = await newTenant();
    const id = await createConversation(undefined, key);
    const r = await api("POST", `/v1/conversations/${id}/messages`, latin1('{"content":"cafÃ©"}'), {
      key,
      raw: true,
      headers: { "content-type": "application/json;charset=latin1" },
    });
    expect(r.status).toBe(415);
    expect(r.json.error?.message).toContain("latin1");
    expect(await transcript(id, key)).toEqual([]);
  });

  it("refuses an import in another charset, JSON or JSONL, and creates nothing", async () => {
    const key = await newTenant();
    const body = JSON.stringify({ messages: [{ role: "user", content: "café" }] });
    for (const type of ["application/json; charset=iso-8859-1", "application/x-ndjson; charset=utf-16"]) {
      const r = await importText(body, key, type);
      expect(r.status).toBe(415);
      expect(r.json.error?.type).toBe("unsupported_media_type");
      expect(r.json.error?.message).toContain(type.split("charset=")[1]);
    }
    expect(await conversationCount(key)).toBe(0);
  });

  it("takes utf-8 in any case, quoted or not, and no charset", async () => {
    const key = await newTenant();
    for (const type of [
      "application/json; charset=utf-8",
      "application/json; charset=UTF-8",
      'Application/JSON; Charset="utf-8"',
      "application/json",
    ]) {
      const r = await api("POST", "/v1/conversations", { title: "café" }, { key, headers: { "content-type": type } });
      expect(r.status).toBe(201);
      expect(r.json.title).toBe("café");
    }
    const imported = await importText(
      JSON.stringify({ messages: [{ role: "user", content: "café" }] }),
      key,
      "application/json; charset=UTF-8",
    );
    expect(imported.status).toBe(201);
  });

  it("takes UTF-8's other labels and US-ASCII, whose bytes are UTF-8 as they are", async () => {
    const key = await newTenant();
    for (const type of ["application/json; charset=us-ascii", "application/json; charset=unicode-1-1-utf-8"]) {
      const r = await api("POST", "/v1/conversations", { title: "plain" }, { key, headers: { "content-type": type } });
      expect(r.status, type).toBe(201);
    }
  });

  it("refuses bytes that are not UTF-8 with a 400 naming the problem", async () => {
    const key = await newTenant();
    const r = await api("POST", "/v1/conversations", latin1('{"title":"café"}'), {
      key,
      raw: true,
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(400);
    expect(r.json.error?.message).toContain("not valid UTF-8");
    expect(await conversationCount(key)).toBe(0);
  });
});
