// Regenerate (`{regenerate: true}` on POST messages and on the websocket's `send` frame): the last
// prompt runs again and the exchange it replaces is superseded. The model, /replay and folds never
// see the superseded messages again; the transcript keeps them, byte for byte, marked. Refused
// with a 409 while a turn runs, with no reply to replace, and once the exchange is (being) folded.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  connectSocket,
  conversationStub,
  createConversation,
  eventually,
  inConversation,
  newTenant,
  send,
  type TranscriptMessage,
  transcript,
  turnMessages,
} from "./helpers";
import { ofType, resultText, toolResults } from "../blocks";

const regenerate = (id: string, key?: string, body: Record<string, unknown> = { regenerate: true }) =>
  api("POST", `/v1/conversations/${id}/messages`, body, { key });
const replayOf = async (id: string) => (await api("GET", `/v1/conversations/${id}/replay`)).json;
/** How many of the replay's user messages say `word` (the offline model's thinking echoes prompts). */
const promptsSaying = (replay: { messages: { role: string; content: unknown }[] }, word: string) =>
  replay.messages.filter((m) => m.role === "user" && JSON.stringify(m.content).includes(word)).length;
const unmarked = (m: TranscriptMessage) => {
  const { superseded: _s, supersededBy: _b, ...rest } = m;
  return rest;
};
const HELD = "Tell me about lakes.\n@reply-chars 1500\n@hold-stream after=200";

describe("regenerate", () => {
  it("replaces the last reply: the replay leaves the superseded exchange out, the transcript keeps it marked and byte for byte", async () => {
    const id = await createConversation();
    await send(id, "Name a river.\n@reply-chars 120");
    const second = await send(id, "Name a mountain, quokkavale.\n@reply-chars 300");
    expect(second.status).toBe(200);
    const [prompt, reply] = second.json.messages;
    const before = await transcript(id);

    const again = await regenerate(id);
    expect(again.status).toBe(200);
    const [copy, fresh] = again.json.messages;
    // The prompt is saved again, the same content; a new reply follows it.
    expect(copy.role).toBe("user");
    expect(copy.content).toEqual(prompt.content);
    expect(copy.seq).toBe(reply.seq + 1);
    expect(fresh.role).toBe("assistant");
    expect(again.json.superseded).toEqual({
      fromSeq: prompt.seq,
      toSeq: reply.seq,
      messageIds: [prompt.id, reply.id],
      supersededBy: copy.id,
    });

    // The model's next request (the replay): one copy of the prompt and one reply (the offline
    // model answers the same prompt alike, so the count is what tells the old reply is gone).
    const replay = await replayOf(id);
    expect(replay.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(promptsSaying(replay, "quokkavale")).toBe(1);
    // The regenerated turn's own model request had the same history: the earlier exchange, then the copy.
    const snaps = (await api("GET", `/v1/conversations/${id}/prompts`)).json.data;
    expect(snaps[0].messages).toBe(3);

    // The complete transcript: everything, the replaced exchange marked, its bytes untouched.
    const after = await transcript(id);
    expect(after.map((m) => m.id)).toEqual([...before.map((m) => m.id), copy.id, fresh.id]);
    expect(after.filter((m) => m.superseded).map((m) => m.id)).toEqual([prompt.id, reply.id]);
    for (const m of after.filter((m) => m.superseded)) expect(m.supersededBy).toBe(copy.id);
    expect(after.slice(0, 4).map(unmarked)).toEqual(before);
    expect(after.slice(4).some((m) => "superseded" in m || "supersededBy" in m)).toBe(false);
    // Still searchable: the replaced prompt keeps its index rows.
    await eventually(async () => {
      const hits = (await api("GET", `/v1/search?q=quokkavale&conversation=${id}`)).json;
      return JSON.stringify(hits).includes(prompt.id) && JSON.stringify(hits).includes(copy.id);
    });

    // Again: the chain goes on, the model still sees one exchange; a next turn follows the newest.
    const third = await regenerate(id);
    expect(third.status).toBe(200);
    expect(third.json.superseded?.messageIds).toEqual([copy.id, fresh.id]);
    await send(id, "And a lake?");
    const last = await replayOf(id);
    expect(last.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(promptsSaying(last, "quokkavale")).toBe(1);
    const marked = (await transcript(id)).filter((m) => m.superseded);
    expect(marked.map((m) => [m.id, m.supersededBy])).toEqual([
      [prompt.id, copy.id],
      [reply.id, copy.id],
      [copy.id, third.json.messages[0].id],
      [fresh.id, third.json.messages[0].id],
    ]);
  });

  it("superseded messages weigh nothing towards the fold and never enter a fold's region", async () => {
    const id = await createConversation();
    await send(id, "first\n@reply-chars 200");
    const big = await send(id, "second\n@reply-chars 3000");
    const weight = (await api("GET", `/v1/conversations/${id}`)).json.unsummarizedChars;
    const again = await regenerate(id, undefined, { regenerate: true });
    expect(again.status).toBe(200);
    const meta = (await api("GET", `/v1/conversations/${id}`)).json;
    // The old 3000-char reply no longer counts; the new exchange does (about the same size).
    const fresh = again.json.messages.reduce((n: number, m) => n + JSON.stringify(m.content).length, 0);
    expect(meta.unsummarizedChars).toBeLessThan(weight + fresh / 2);
    expect(meta.superseded).toEqual([
      { fromSeq: big.json.messages[0].seq, toSeq: big.json.messages[1].seq, by: again.json.messages[0].id },
    ]);
    const region = await inConversation(id, async (instance) => {
      instance.store.putLease({ jobId: "fold_test", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 });
      const source = await instance.foldSource({ tenantId: "dev", conversationId: id }, "fold_test");
      instance.store.clearLease();
      return source?.region.map((m) => m.id) ?? [];
    });
    expect(region).not.toContain(big.json.messages[0].id);
    expect(region).not.toContain(big.json.messages[1].id);
    expect(region).toContain(again.json.messages[1].id);
    // The head in R2 (the record a rebuild starts from) carries the ranges too.
    const head = await (await env.BUCKET.get(`tenants/dev/conversations/${id}/head.json`))!.json<{
      superseded?: unknown;
    }>();
    expect(head.superseded).toEqual(meta.superseded);
  });

  it("is a 409 with no reply to replace: a new conversation, and a last prompt whose turn failed", async () => {
    const id = await createConversation();
    const none = await regenerate(id);
    expect(none.status).toBe(409);
    expect(none.json.error?.type).toBe("nothing_to_regenerate");
    expect(none.json.error?.message).toMatch(/^regenerate: /);
    const failed = await send(id, "Is it busy?\n@model-error 529");
    expect(failed.status).toBe(502);
    const after = await regenerate(id);
    expect(after.status).toBe(409);
    expect(after.json.error?.type).toBe("nothing_to_regenerate");
    expect((await transcript(id)).length).toBe(1);
  });

  it("is a 409 for a failed prompt that repeats the answered one before it: only a regenerate's own copy is run again", async () => {
    const id = await createConversation();
    const P = "continue\n@reply-chars 60\n@stream-pace 1500";
    expect((await send(id, "Name a lake.\n@reply-chars 60")).status).toBe(200);
    expect((await send(id, P)).status).toBe(200);
    // The same words again, stopped before the first token: a prompt with no reply.
    const watch = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const turn = send(id, P);
    await watch.next((e) => e.type === "turn_start");
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).status).toBe(200);
    await turn;
    watch.ws!.close();
    expect((await transcript(id)).at(-1)?.role).toBe("user");
    const again = await regenerate(id);
    expect(again.status).toBe(409);
    expect(again.json.error?.type).toBe("nothing_to_regenerate");
    expect((await transcript(id)).some((m) => m.superseded)).toBe(false);
  });

  it("takes an attachment's note for no prompt: the reply before an upload is replaced, and the note stays", async () => {
    const id = await createConversation();
    const first = await send(id, "Name a bay, kelpwhistle.\n@reply-chars 120");
    const [prompt, reply] = first.json.messages;
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=notes.txt`, "a line of text\n", {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const noteMessage = (await transcript(id)).at(-1)!;
    expect(JSON.stringify(noteMessage.content)).toContain("<attachment id=");

    const again = await regenerate(id);
    expect(again.status).toBe(200);
    // The exchange is the prompt and its reply; the note after them is not in it.
    expect(again.json.superseded).toMatchObject({ fromSeq: prompt.seq, toSeq: reply.seq });
    const [copy] = again.json.messages;
    expect(copy.content).toEqual(prompt.content);
    expect(copy.seq).toBe(noteMessage.seq + 1);
    const replay = await replayOf(id);
    expect(promptsSaying(replay, "kelpwhistle")).toBe(1);
    expect(JSON.stringify(replay.messages)).toContain("<attachment id=");
  });

  it("regenerates again a regenerate stopped before the model answered: its copy is replaced in turn", async () => {
    const id = await createConversation();
    const first = await send(id, "Name a lake.\n@reply-chars 60\n@stream-pace 400");
    expect(first.status).toBe(200);
    const sock = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    sock.ws!.send(JSON.stringify({ type: "send", regenerate: true }));
    const marked = await sock.next((e) => e.type === "exchange_superseded");
    sock.ws!.send(JSON.stringify({ type: "stop", turnId: marked.turnId }));
    await sock.next((e) => e.type === "stopped");
    sock.ws!.close();
    // Stopped before its first delta: the copy of the prompt stands alone, the old exchange replaced.
    const stopped = await transcript(id);
    expect(stopped.map((m) => [m.role, !!m.superseded])).toEqual([
      ["user", true],
      ["assistant", true],
      ["user", false],
    ]);
    const again = await regenerate(id);
    expect(again.status).toBe(200);
    const [copy, reply] = again.json.messages;
    expect(reply.role).toBe("assistant");
    expect(again.json.superseded).toEqual({
      fromSeq: 3,
      toSeq: 3,
      messageIds: [stopped[2].id],
      supersededBy: copy.id,
    });
    const all = await transcript(id);
    expect(all.map((m) => m.supersededBy ?? null)).toEqual([stopped[2].id, stopped[2].id, copy.id, null, null]);
    expect((await replayOf(id)).messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("is a 409 while a turn runs (HTTP and websocket), and nothing is saved for it", async () => {
    const id = await createConversation();
    await send(id, "hello\n@reply-chars 100");
    const watch = await connectSocket(`/v1/conversations/${id}/ws`, { authorization: "Bearer dev-local-key" });
    const turn = send(id, HELD);
    const start = await watch.next((e) => e.type === "turn_start");
    await watch.next((e) => e.type === "delta" && e.turnId === start.turnId);
    const busy = await regenerate(id);
    expect(busy.status).toBe(409);
    expect(busy.json.error?.type).toBe("turn_in_progress");
    watch.ws!.send(JSON.stringify({ type: "send", regenerate: true }));
    const refused = ofType(
      await watch.next((e) => e.type === "error" && e.error?.type === "turn_in_progress"),
      "error",
    );
    expect(refused.error.status).toBe(409);
    expect((await api("POST", `/v1/conversations/${id}/stop`, {})).status).toBe(200);
    await turn;
    expect((await transcript(id)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect((await transcript(id)).some((m) => m.superseded)).toBe(false);

    // Once it has ended, the websocket's `send` frame regenerates: the superseded event, then the new exchange.
    await send(id, "quick one\n@reply-chars 80");
    watch.ws!.send(JSON.stringify({ type: "send", regenerate: true }));
    const marked = await watch.next((e) => e.type === "exchange_superseded");
    await watch.next((e) => e.type === "turn_end" && e.turnId === marked.turnId);
    const all = await transcript(id);
    expect(marked.messageIds).toEqual([all[4].id, all[5].id]);
    expect(marked.supersededBy).toBe(all[6].id);
    expect(all[6].content).toEqual(all[4].content);
    expect(all.map((m) => !!m.superseded)).toEqual([false, false, false, false, true, true, false, false]);
    watch.ws!.close();
  });

  it("is a 409 once the last exchange is folded into the summary, or while a fold is in flight", async () => {
    const id = await createConversation();
    await send(id, "one\n@reply-chars 100");
    await inConversation(id, async (instance) => {
      instance.store.putLease({ jobId: "fold_x", dispatchedAt: Date.now(), expiresAt: Date.now() + 60_000 });
    });
    const inFlight = await regenerate(id);
    expect(inFlight.status).toBe(409);
    expect(inFlight.json.error?.type).toBe("regenerate_folded");
    await inConversation(id, async (instance) => {
      instance.store.clearLease();
      await instance.record.updateHead((h) => ({
        next: { ...h, summary: "they said one", summarizedThroughMessage: 2, summarizedThroughMessageId: null },
        result: undefined,
      }));
      instance.cache.forget();
    });
    const folded = await regenerate(id);
    expect(folded.status).toBe(409);
    expect(folded.json.error?.type).toBe("regenerate_folded");
    expect(folded.json.error?.message).toMatch(/folded into the summary/);
    expect((await transcript(id)).length).toBe(2);
  });

  it("marks what it replaced wherever the model reads it back: conversation_read and memory_get", async () => {
    const id = await createConversation();
    const first = await send(id, "Name a lake, fernquill.\n@reply-chars 100");
    const [prompt, reply] = first.json.messages;
    const again = await regenerate(id);
    const copy = again.json.messages[0];
    const read = await send(
      id,
      `@tool conversation_read {"from_seq":1,"to_seq":4}\n@tool memory_get {"id":"${reply.id}"}\n@tool conversation_read {"message_id":"${copy.id}"}`,
    );
    const [range, got, current] = toolResults(turnMessages(read)).map(resultText);
    const marked = ` (replaced by a regenerate: superseded by ${copy.id})`;
    expect(range).toContain(`--- seq ${prompt.seq} user ${prompt.id} ${prompt.createdAt}${marked}\n`);
    expect(range).toContain(`--- seq ${reply.seq} assistant ${reply.id} ${reply.createdAt}${marked}\n`);
    expect(range).toContain(`--- seq ${copy.seq} user ${copy.id} ${copy.createdAt}\n`);
    expect(got).toContain(`message ${reply.id} (seq ${reply.seq}, assistant)${marked}`);
    expect(current).not.toContain("replaced by a regenerate");
  });

  it("refuses the commit of a fold whose expired lease was held when the exchange was replaced", async () => {
    const id = await createConversation({ tailMessages: 2 });
    await send(id, "one\n@reply-chars 100");
    const second = await send(id, "two oldversion\n@reply-chars 100");
    const ref = { tenantId: "dev", conversationId: id };
    // A fold took its region, then its lease ran out (a slow summarizer, queue retries).
    const source = await inConversation(id, async (instance) => {
      instance.store.putLease({
        jobId: "fold_stale",
        dispatchedAt: Date.now() - 700_000,
        expiresAt: Date.now() + 1_000,
      });
      const taken = await instance.foldSource(ref, "fold_stale");
      instance.store.putLease({
        jobId: "fold_stale",
        dispatchedAt: Date.now() - 700_000,
        expiresAt: Date.now() - 100_000,
      });
      return taken;
    });
    expect(source?.region.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect((await regenerate(id)).status).toBe(200);
    const boundary = second.json.messages[1];
    const out = await conversationStub(id).commitFold(ref, {
      jobId: "fold_stale",
      kind: "summary",
      summary: "the user said one, then two oldversion; the old reply",
      boundaryMessageId: boundary.id,
      boundarySeq: boundary.seq,
    });
    expect(out).toEqual({ applied: false, reason: "stale job: not the fold in flight" });
    expect((await api("GET", `/v1/conversations/${id}`)).json.summary ?? "").not.toContain("oldversion");
  });

  it("bad input is a 400 naming the field; another tenant's conversation is a 404", async () => {
    const id = await createConversation();
    await send(id, "hi\n@reply-chars 50");
    const withContent = await regenerate(id, undefined, { regenerate: true, content: "again" });
    expect(withContent.status).toBe(400);
    expect(withContent.json.error?.message).toMatch(/content: not allowed with regenerate/);
    const withFiles = await regenerate(id, undefined, { regenerate: true, attachments: ["att_x"] });
    expect(withFiles.status).toBe(400);
    expect(withFiles.json.error?.message).toMatch(/attachments: not allowed with regenerate/);
    expect((await regenerate(id, undefined, { regenerate: false })).status).toBe(400);
    const empty = await regenerate(id, undefined, {});
    expect(empty.status).toBe(400);
    expect(empty.json.error?.message).toMatch(/content/);
    const other = await newTenant();
    const foreign = await regenerate(id, other);
    expect(foreign.status).toBe(404);
    expect((await transcript(id)).length).toBe(2);
  });
});
