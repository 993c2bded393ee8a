// A conversation's activity (the listing's `updatedAt`, `?order=activity`) only moves forward. A
// rename that lands while a turn's reply is being written to R2 used to be overwritten by the save's
// earlier time when the write finished: the conversation renamed last listed below one renamed
// before it, and a client paging one pass of `?order=activity` saw it twice.
import { describe, expect, it } from "vitest";
import { api, eventually, newTenant, send } from "./helpers";
import { holdObjectPut } from "./hold-supersede-write";

/** Holds the R2 write of the conversation's next assistant message until `release`. */
const holdReplyWrite = (conversationId: string) =>
  holdObjectPut(conversationId, (key, body) => key.includes("/messages/") && body.includes('"role":"assistant"'));

interface Row {
  id: string;
  updatedAt: string;
}
const listing = async (key: string, query: string) =>
  (await api("GET", `/v1/conversations?order=activity${query}`, undefined, { key })).json as unknown as {
    data: Row[];
    next: string | null;
  };

describe("a conversation's activity", () => {
  it("keeps a rename that landed while the reply was being saved, and one pass lists each conversation once", async () => {
    const key = await newTenant();
    const x = (await api("POST", "/v1/conversations", { title: "x" }, { key })).json.id;
    const y = (await api("POST", "/v1/conversations", { title: "y" }, { key })).json.id;
    expect((await send(x, "first", key)).status).toBe(200);

    const hold = await holdReplyWrite(x);
    const turn = send(x, "second", key);
    await hold.reached;
    expect((await api("PATCH", `/v1/conversations/${y}`, { title: "y renamed" }, { key })).status).toBe(200);
    const renamed = await api("PATCH", `/v1/conversations/${x}`, { title: "x renamed" }, { key });
    expect(renamed.status).toBe(200);
    // One pass begins: X, renamed last, is first.
    const first = await eventually(async () => {
      const p = await listing(key, "&limit=1");
      return p.data[0]?.id === x && p.data[0].updatedAt >= renamed.json.updatedAt ? p : null;
    });

    hold.release();
    expect((await turn).status).toBe(200);
    // The listing row follows the object (its outbox), a moment after the turn: X stays first, at
    // its rename's time or later.
    await new Promise((r) => setTimeout(r, 1_500));
    const after = (await listing(key, "&limit=10")).data;
    expect(after.map((r) => r.id)).toEqual([x, y]);
    expect(after[0].updatedAt >= renamed.json.updatedAt).toBe(true);

    const seen = first.data.map((r) => r.id);
    for (let cursor = first.next; cursor; ) {
      const p = await listing(key, `&limit=1&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...p.data.map((r) => r.id));
      cursor = p.next;
    }
    expect(seen).toEqual([x, y]);
  });
});
