// Writes of a note reach the tenant's cortex shard (its search document), so they hand on the
// bookmark they reached there, as the index outbox does: POST/PATCH/DELETE /v1/memory answer it in
// `x-cortex-bookmark` (a search sent with it does not find a note just deleted), and the model's
// memory_save / memory_forget move the conversation's read bookmark, where a memory_search later in
// the same turn starts its session.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { routeOf, shardDatabase } from "../../services/cortex/routing";
import { app } from "../../workers/chat/app";
import { ofType, resultText } from "../blocks";
import { eventually, newTenantWithId, send, turnMessages } from "./helpers";
import { latest, spiedConversation, spyShard } from "./shard-spy";

describe("cortex bookmarks of note writes", () => {
  it("answer x-cortex-bookmark on POST, PATCH and DELETE /v1/memory: the bookmark the note's shard write reached", async () => {
    const { tenantId, key } = await newTenantWithId();
    const shard = (await routeOf(env as Env, tenantId)).shard;
    const spy = spyShard(shardDatabase(env, shard));
    const call = async (method: string, path: string, body?: unknown) => {
      const ctx = createExecutionContext();
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      const res = await app.fetch(
        new Request(`http://chat.test${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        { ...(env as Env), [shard]: spy.db },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return res;
    };
    /** The header answered, checked to name the shard, and the primary's newest bookmark since `from`. */
    const answered = (res: Response, from: number) => {
      const value = res.headers.get("x-cortex-bookmark");
      expect(value).toMatch(new RegExp(`^[0-9a-f]+(-[0-9a-f]+)+@${shard}$`));
      expect(value).toBe(`${latest(spy.written(from))}@${shard}`);
      return value!;
    };

    let from = spy.log.length;
    const created = await call("POST", "/v1/memory", { title: "secret", text: "zebraquartz launch code" });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    answered(created, from);

    const c1 = (await call("GET", "/v1/search?q=zebraquartz")).headers.get("x-cortex-bookmark")!;

    from = spy.log.length;
    const patched = await call("PATCH", `/v1/memory/${id}`, { text: "zebraquartz launch code, new" });
    expect(patched.status).toBe(200);
    answered(patched, from);

    from = spy.log.length;
    const deleted = await call("DELETE", `/v1/memory/${id}`);
    expect(deleted.status).toBe(204);
    const c2 = answered(deleted, from);
    expect(c2 > c1).toBe(true);
    // Deleted again: a 404 that still cleared the shard (a document a cut-short write might have left).
    from = spy.log.length;
    const again = await call("DELETE", `/v1/memory/${id}`);
    expect(again.status).toBe(404);
    answered(again, from);

    // A search sent with it starts at that bookmark and does not find the note.
    from = spy.log.length;
    const ctx = createExecutionContext();
    const sent = await app.fetch(
      new Request("http://chat.test/v1/search?q=zebraquartz", {
        headers: { authorization: `Bearer ${key}`, "x-cortex-bookmark": c2 },
      }),
      { ...(env as Env), [shard]: spy.db },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(spy.log.slice(from)).toContainEqual({ session: c2.slice(0, c2.lastIndexOf("@")) });
    expect(((await sent.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it("move the conversation's read bookmark on memory_save and memory_forget, so a memory_search later in the turn reads past them", async () => {
    const { key, id, spy } = await spiedConversation();
    // The object's first index write: its read bookmark is set, and behind what the save will reach.
    await send(id, "the ledger opens at nine", key);
    await eventually(async () => spy.written().length > 0 || null);

    /** Runs a turn; answers its tool results and checks the search's session against the turn's writes before it. */
    const turn = async (content: string) => {
      const from = spy.log.length;
      const r = await send(id, content, key);
      expect(r.status).toBe(200);
      const steps = spy.log.slice(from);
      const search = steps.findLastIndex((s) => "session" in s && s.session !== "first-primary");
      expect(search).toBeGreaterThan(-1);
      const start = (steps[search] as { session: string }).session;
      const before = steps.slice(0, search).flatMap((s) => ("written" in s ? [s.written] : []));
      expect(before.length).toBeGreaterThan(0);
      // At or past every shard write of the turn before it (the note's among them), never anywhere.
      expect(start).not.toBe("first-unconstrained");
      expect(start >= latest(before), `search from ${start}, written ${latest(before)}`).toBe(true);
      return turnMessages(r)
        .flatMap((m) => m.content)
        .filter((b) => b.type === "tool_result")
        .map((b) => resultText(ofType(b, "tool_result")));
    };

    const saved = await turn(
      '@tools-per-step 1\n@tool memory_save {"title":"pin","text":"the vault pin is quasarzebra"}\n@tool memory_search {"query":"quasarzebra"}',
    );
    const noteId = /mem_[0-9A-Z]{26}/.exec(saved[0])![0];
    /** memory_search's line of the note (the transcript's mentions of it are hits too). */
    const noteHit = new RegExp(`^\\d+\\. note ${noteId} `, "m");
    expect(saved[1]).toMatch(noteHit);

    const forgot = await turn(
      `@tools-per-step 1\n@tool tool_activate {"name":"memory_forget"}\n@tool memory_forget {"id":"${noteId}"}\n@tool memory_search {"query":"quasarzebra"}`,
    );
    expect(forgot[1]).toContain(`deleted note ${noteId}`);
    expect(forgot[2]).not.toMatch(noteHit);
  });
});
