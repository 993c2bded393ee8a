// Faults in storage and in the Durable Object itself: R2 and D1 calls failing transiently (or for
// longer than the retries), an R2 write whose answer is lost after it landed, and the object
// aborted mid-turn — before a reply's R2 write lands, after it lands but before the index has it,
// and during a tool step. The seam: the live object's `env` is swapped for one whose BUCKET / DB
// wrap the real bindings and fail on cue. After each: the transcript is exactly what was sent and
// answered, the summary invariants hold, the index catches up, and the next turn is taken; a turn
// that fails after its model calls still meters what they spent.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFoldJob } from "../../workers/summarizer/fold";
import { Ledger, reportInjections } from "./fault-ledger";
import { api, createConversation, eventually, send, textOf, transcript, worker, inConversation } from "./helpers";
import type { TurnEvent } from "../../core/events";
import type { ConversationHead } from "../../services/record/conversation-head";
import { ofType } from "../blocks";

type Action = "throw" | "lost-answer" | "hang" | "hang-after" | undefined;
type Hook = (op: string, key: string) => Action;

const stubOf = (id: string) => env.CONVERSATION.get(env.CONVERSATION.idFromName(id));
const never = () => new Promise<never>(() => {});

/** A binding whose methods consult `hook` first: fail, lose the answer, or never return. */
function faulty<T extends object>(real: T, hook: Hook, counter: { n: number }): T {
  return new Proxy(real, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const key = typeof args[0] === "string" ? args[0] : "";
        const action = hook(String(prop), key);
        if (action === "throw") {
          counter.n++;
          const error = new Error(`injected failure: ${String(prop)} ${key}`);
          // D1's prepare is synchronous: it fails by throwing, everything else by rejecting.
          if (prop === "prepare") throw error;
          return Promise.reject(error);
        }
        if (action === "hang") return (counter.n++, never());
        const out = value.apply(target, args);
        if (!action) return out;
        counter.n++;
        return Promise.resolve(out).then(() =>
          action === "hang-after"
            ? never()
            : Promise.reject(new Error(`injected: answer lost: ${String(prop)} ${key}`)),
        );
      };
    },
  });
}

/** Swaps the live object's bindings for faulty ones; returns the injection counter. */
async function inject(id: string, faults: { r2?: Hook; d1?: Hook }): Promise<{ n: number }> {
  const counter = { n: 0 };
  const bindings: Record<string, PropertyDescriptor> = {};
  if (faults.r2) bindings.BUCKET = { value: faulty(env.BUCKET, faults.r2, counter) };
  if (faults.d1) bindings.DB = { value: faulty(env.DB, faults.d1, counter) };
  await inConversation(id, (instance) => {
    Object.defineProperty(instance, "env", { value: Object.create(env, bindings), configurable: true, writable: true });
  });
  return counter;
}

/** Fails the first `times` calls that match. */
const first = (times: number, match: (op: string, key: string) => boolean, action: Action = "throw"): Hook => {
  let left = times;
  return (op, key) => (left > 0 && match(op, key) ? (left--, action) : undefined);
};
const batchPut = (seq: number) => (op: string, key: string) =>
  op === "put" && key.includes(`/messages/${String(seq).padStart(12, "0")}`);

async function sseTurn(
  id: string,
  turn: string | { content: string; attachments: string[] },
  onEvent?: (e: TurnEvent) => void,
): Promise<TurnEvent[]> {
  const res = await worker().fetch(
    new Request(`http://chat.test/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: {
        authorization: "Bearer dev-local-key",
        "content-type": "application/json",
        accept: "text/event-stream",
      },
      body: JSON.stringify(typeof turn === "string" ? { content: turn } : turn),
    }),
  );
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: TurnEvent[] = [];
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = buffer.indexOf("\n\n")) >= 0) {
        const data = /^data: (.*)$/m.exec(buffer.slice(0, at))?.[1];
        buffer = buffer.slice(at + 2);
        if (!data) continue;
        const e = JSON.parse(data) as TurnEvent;
        events.push(e);
        onEvent?.(e);
      }
    }
  } catch {
    // the stream broke with the object: what arrived is what the client knows
  }
  return events;
}

describe("fault: R2 calls fail", () => {
  it("retries a failed batch write, a write whose answer was lost, and a head write; a longer outage fails the turn cleanly (8 injections)", async () => {
    let injected = 0;
    const ledger = new Ledger(await createConversation({ foldThresholdChars: 4000 }));
    await ledger.turn("before the faults");

    // The user message's batch write fails twice, then lands.
    let c = await inject(ledger.id, { r2: first(2, batchPut(3)) });
    await ledger.turn("the write of this prompt fails twice");
    injected += c.n;
    // The reply's batch lands but the answer is lost: the retry finds exactly its bytes.
    c = await inject(ledger.id, { r2: first(1, batchPut(6), "lost-answer") });
    await ledger.turn("the answer to this reply's write is lost");
    injected += c.n;
    await ledger.check();

    // Longer than the retries (4 failures) on the reply: the turn fails, the prompt stays saved.
    c = await inject(ledger.id, { r2: first(4, batchPut(8)) });
    const r = await send(ledger.id, "the store is down for this reply");
    injected += c.n;
    expect(r.status).toBe(502);
    expect(r.json.error?.type).toBe("storage_error");
    ledger.record(r.json.messages);
    await ledger.survives();

    // A head write (a fold commit) fails once and is retried.
    let jobId: string | null = null;
    for (let i = 0; i < 30 && !jobId; i++) {
      await ledger.turn(`grow ${i}\n@reply-chars 900`);
      jobId = (await api("GET", `/v1/conversations/${ledger.id}`)).json.foldInFlight
        ? await runInDurableObject(
            stubOf(ledger.id),
            (_i, s) =>
              JSON.parse(
                s.storage.sql.exec<{ value: string }>("SELECT value FROM kv WHERE key = 'fold_lease'").one().value,
              ).jobId,
          )
        : null;
    }
    c = await inject(ledger.id, { r2: first(1, (op, key) => op === "put" && key.endsWith("head.json")) });
    expect(
      (
        await runFoldJob(
          {
            kind: "fold",
            jobId: jobId!,
            tenantId: "dev",
            conversationId: ledger.id,
            requestedAt: new Date().toISOString(),
          },
          env as Env,
        )
      ).applied,
    ).toBe(true);
    injected += c.n;
    const head = await (await env.BUCKET.get(
      `tenants/dev/conversations/${ledger.id}/head.json`,
    ))!.json<ConversationHead>();
    expect(head.summarizedThroughMessage).toBe(
      (await api("GET", `/v1/conversations/${ledger.id}`)).json.summarizedThroughMessage,
    );
    await ledger.survives();
    expect(injected).toBe(8);
    reportInjections("R2 failure", injected, "2 failed batch writes, 1 lost answer, 4 during an outage, 1 head write");
  });

  it("a head write that fails before the model loop (activating a file's tools) ends the turn with error and turn_end, nothing saved (8 injections)", async () => {
    // A file uploaded to another conversation of the tenant: naming it in a turn activates its tools here.
    const source = await createConversation();
    const up = await api("POST", `/v1/conversations/${source}/attachments?name=notes.txt`, "line one\nline two\n", {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(up.status).toBe(201);
    const ledger = new Ledger(await createConversation());
    const headPut = (op: string, key: string) => op === "put" && key.endsWith("head.json");
    // Past the head write's retries (4 failures), over SSE: the stream still ends with error, then turn_end.
    let c = await inject(ledger.id, { r2: first(4, headPut) });
    const events = await sseTurn(ledger.id, { content: "read my notes", attachments: [up.json.id] });
    expect(c.n).toBe(4);
    expect(events.map((e) => e.type)).toEqual(["turn_start", "error", "turn_end"]);
    expect(events[1]).toMatchObject({ error: { type: "storage_error" } });
    // The same as JSON: a 502 naming it, no messages.
    c = await inject(ledger.id, { r2: first(4, headPut) });
    const r = await api("POST", `/v1/conversations/${ledger.id}/messages`, {
      content: "read my notes",
      attachments: [up.json.id],
    });
    expect(c.n).toBe(4);
    expect(r.status).toBe(502);
    expect(r.json.error?.type).toBe("storage_error");
    expect(r.json.messages).toEqual([]);
    await ledger.survives();
    reportInjections("R2 failure before the model loop", 8, "4 head writes over SSE, 4 as JSON");
  });

  it("an upload whose tools cannot be activated (head writes fail) keeps neither the file nor its note (4 injections)", async () => {
    const ledger = new Ledger(await createConversation());
    await ledger.turn("before the upload");
    const c = await inject(ledger.id, { r2: first(4, (op, key) => op === "put" && key.endsWith("head.json")) });
    const up = await api("POST", `/v1/conversations/${ledger.id}/attachments?name=notes.txt`, "line one\nline two\n", {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(c.n).toBe(4);
    expect(up.status).toBeGreaterThanOrEqual(500);
    expect((await api("GET", `/v1/conversations/${ledger.id}/attachments`)).json.data).toEqual([]);
    // No note names a file that is gone: the transcript is the turn before.
    expect(JSON.stringify(await transcript(ledger.id))).not.toContain("<attachment");
    await ledger.survives();
    reportInjections("R2 failure activating an upload's tools", c.n);
  });

  it("an upload whose note landed unseen (its answers lost, then an outage) keeps its file: the note adopted later names one that exists (4 injections)", async () => {
    const id = await createConversation();
    const plan: Action[] = ["lost-answer", "throw", "throw", "throw"];
    const c = await inject(id, { r2: (op, key) => (batchPut(1)(op, key) ? plan.shift() : undefined) });
    const up = await api("POST", `/v1/conversations/${id}/attachments?name=notes.txt`, "hello\nworld\n", {
      raw: true,
      headers: { "content-type": "text/plain" },
    });
    expect(c.n).toBe(4);
    expect(up.status).toBe(502);
    expect(up.json.error?.type).toBe("storage_error");
    // The next write adopts the batch that landed: its note must name a file that is still there.
    expect((await send(id, "next")).status).toBe(200);
    const note = (await transcript(id)).find((m) => JSON.stringify(m.content).includes("<attachment id="));
    const named = /att_[0-9A-Z]{26}/.exec(JSON.stringify(note?.content))?.[0];
    expect(named).toBeDefined();
    expect((await api("GET", `/v1/conversations/${id}/attachments/${named}`)).status).toBe(200);
  });

  it("a regenerate whose mark could not be saved (head writes fail after the copy) can be regenerated again: the exchange and the copy are replaced (4 injections)", async () => {
    const id = await createConversation();
    await send(id, "first question");
    const c = await inject(id, { r2: first(4, (op, key) => op === "put" && key.endsWith("head.json")) });
    const failed = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    expect(c.n).toBe(4);
    expect(failed.status).toBe(502);
    // The copy was saved, the mark was not: the prompt shows twice, nothing superseded.
    const shape = async () =>
      (await transcript(id)).map((m) => `${m.seq}:${m.role}${m.superseded ? ":superseded" : ""}`);
    expect(await shape()).toEqual(["1:user", "2:assistant", "3:user"]);
    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    expect(again.status, again.text).toBe(200);
    expect(await shape()).toEqual([
      "1:user:superseded",
      "2:assistant:superseded",
      "3:user:superseded",
      "4:user",
      "5:assistant",
    ]);
    const replay = await api("GET", `/v1/conversations/${id}/replay`);
    // What the model sees next: the one exchange the regenerate made.
    expect(replay.json.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  });

  it("a regenerate after a prompt landed unseen works on what R2 holds: no earlier exchange is replaced (4 injections)", async () => {
    const id = await createConversation();
    await send(id, "one");
    const plan: Action[] = ["lost-answer", "throw", "throw", "throw"];
    const c = await inject(id, { r2: (op, key) => (batchPut(3)(op, key) ? plan.shift() : undefined) });
    expect((await send(id, "two")).status).toBe(502);
    expect(c.n).toBe(4);
    // The prompt that landed ("two") is the last prompt, with no reply: sent again, not regenerated.
    const again = await api("POST", `/v1/conversations/${id}/messages`, { regenerate: true });
    expect(again.status, again.text).toBe(409);
    expect(again.json.error?.type).toBe("nothing_to_regenerate");
    const seen = await transcript(id);
    expect(seen.map((m) => `${m.seq}:${m.role}${m.superseded ? ":superseded" : ""}`)).toEqual([
      "1:user",
      "2:assistant",
      "3:user",
    ]);
    expect(textOf(seen[2])).toBe("two");
  });

  it("meters the tokens of a turn whose reply could not be saved (4 injections)", async () => {
    const id = await createConversation();
    // The reply (seq 2) fails longer than the retries: the model answered, so its tokens were billed.
    const c = await inject(id, { r2: first(4, batchPut(2)) });
    const r = await send(id, "the store is down for this reply");
    expect(r.status).toBe(502);
    expect(r.json.error?.type).toBe("storage_error");
    expect(c.n).toBe(4);
    const report = await eventually(async () => {
      const u = (await api("GET", `/v1/usage?conversation=${id}`)).json;
      return u.total?.turns === 1 ? u : null;
    });
    const { input_tokens, cache_read_input_tokens, cache_creation_input_tokens } = report.total;
    expect(input_tokens + cache_read_input_tokens + cache_creation_input_tokens).toBeGreaterThan(0);
    expect(report.total.output_tokens).toBeGreaterThan(0);
    expect(report.total.cost_usd).toBeGreaterThan(0);
    // The failed turn's own answer says what it spent, as the ledger does.
    expect(r.json.usage?.output_tokens).toBe(report.total.output_tokens);
    expect(r.json.usage?.cost_usd).toBeCloseTo(report.total.cost_usd, 9);
    // The next turn is metered on its own, once.
    const next = await send(id, "and now it is back");
    expect(next.status).toBe(200);
    const both = await eventually(async () => {
      const u = (await api("GET", `/v1/usage?conversation=${id}`)).json;
      return u.total?.turns === 2 ? u : null;
    });
    expect(both.total.output_tokens).toBe(report.total.output_tokens + next.json.usage!.output_tokens);
  });

  it("counts a failed delegated run's calls in the turn's usage and the ledger (4 injections)", async () => {
    const id = await createConversation();
    const activation = await send(id, '@tool tool_activate {"name":"agent_delegate"}');
    const before = (await transcript(id)).length;
    // After the prompt (before + 1), the master's delegate call (+ 2) and the sub-agent's task
    // (+ 3), the sub-agent's first answer (+ 4) cannot be saved: its model call was made and billed,
    // the run fails, and the master goes on with the error as the tool's result.
    const c = await inject(id, { r2: first(4, batchPut(before + 4)) });
    const task = 'Summarize the plan.\n@tool conversation_read {"from_seq":1,"to_seq":1}';
    const r = await send(id, `@tool agent_delegate ${JSON.stringify({ name: "reader", task })}`);
    expect(r.status).toBe(200);
    expect(c.n).toBe(4);
    const turn = (await transcript(id)).slice(before);
    const failed = turn.find((m) => m.content.some((b) => b.type === "tool_result"));
    expect(JSON.stringify(failed?.content)).toContain("agent_delegate failed");
    expect(turn.filter((m) => m.agent).map((m) => m.role)).toEqual(["user"]);
    // The turn's usage is the master's two calls and the sub-agent's unsaved one.
    const master = turn.filter((m) => m.role === "assistant" && !m.agent);
    expect(master).toHaveLength(2);
    const mastersOwn = master.reduce((n, m) => n + (m.usage?.output_tokens ?? 0), 0);
    expect(mastersOwn).toBeGreaterThan(0);
    expect(r.json.usage!.output_tokens).toBeGreaterThan(mastersOwn);
    // ...and the ledger has it, once.
    const report = await eventually(async () => {
      const u = (await api("GET", `/v1/usage?conversation=${id}`)).json;
      return u.total?.turns === 2 ? u : null;
    });
    expect(report.total.output_tokens).toBe(activation.json.usage!.output_tokens + r.json.usage!.output_tokens);
  });

  it("a batch that landed although its write failed (answer lost, then an outage) is adopted by the next write, never numbered again (8 injections)", async () => {
    const id = await createConversation();
    expect((await send(id, "one")).status).toBe(200); // seqs 1-2
    const landedThenDown = (seq: number): Hook => {
      const plan: Action[] = ["lost-answer", "throw", "throw", "throw"];
      return (op, key) => (batchPut(seq)(op, key) ? plan.shift() : undefined);
    };
    // The reply (seq 4) lands, its answer is lost, and the retries meet an outage.
    let c = await inject(id, { r2: landedThenDown(4) });
    expect((await send(id, "two")).status).toBe(502);
    expect(c.n).toBe(4);
    // The store is back: the next turn is taken after the reply that landed.
    expect((await send(id, "three")).status).toBe(200);
    // Again on a prompt (seq 7); then an import of one exchange, whose batch would have another key.
    c = await inject(id, { r2: landedThenDown(7) });
    expect((await send(id, "four")).status).toBe(502);
    expect(c.n).toBe(4);
    const imported = await api("POST", `/v1/conversations/${id}/import`, {
      messages: [
        { role: "user", text: "imported question" },
        { role: "assistant", text: "imported answer" },
      ],
    });
    expect(imported.status).toBe(201);
    const shape = (t: { seq: number; role: string }[]) => t.map((m) => `${m.seq}:${m.role}`);
    const expected = [
      "1:user",
      "2:assistant",
      "3:user",
      "4:assistant",
      "5:user",
      "6:assistant",
      "7:user",
      "8:user",
      "9:assistant",
    ];
    const seen = await transcript(id);
    expect(shape(seen)).toEqual(expected);
    expect(seen.map((m) => textOf(m))).toContain("four");
    const exported = await api("GET", `/v1/conversations/${id}/export?format=json`);
    expect(shape(exported.json.messages as { seq: number; role: string }[])).toEqual(expected);
    // Rebuilt from R2 alone, the object holds the same record.
    await runInDurableObject(stubOf(id), async (_i, state) => state.storage.deleteAll());
    await evictDurableObject(stubOf(id));
    expect(await transcript(id)).toEqual(seen);
  });

  it("a prompt adopted from R2 after the object died mid-write is indexed by the alarm the adoption sets (1 injection)", async () => {
    const id = await createConversation();
    expect((await send(id, "first turn words")).status).toBe(200);
    const n = (await transcript(id)).length;
    await runDurableObjectAlarm(stubOf(id)); // the first turn's indexing is done: no alarm is left
    // The prompt's batch lands and its answer never comes; the object dies while it waits.
    const c = await inject(id, { r2: first(1, batchPut(n + 1), "hang-after") });
    const turn = send(id, "zebraquokka crashed prompt");
    await eventually(async () => c.n === 1 || null);
    await runInDurableObject(stubOf(id), (_i, state) => state.abort("injected crash")).catch(() => {});
    await turn.catch(() => {});
    expect((await transcript(id)).some((m) => textOf(m).includes("zebraquokka"))).toBe(true);
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    await eventually(async () =>
      (await api("GET", `/v1/search?q=zebraquokka&conversation=${id}`)).json.data.length === 1 ? true : null,
    );
  });

  it("rebuilds from R2 when the head read and the batch listing fail on the cold start (2 injections)", async () => {
    const ledger = new Ledger(await createConversation());
    await ledger.turn("one");
    await ledger.turn("two");
    await runInDurableObject(stubOf(ledger.id), async (_i, state) => state.storage.deleteAll());
    await evictDurableObject(stubOf(ledger.id));
    const c = await inject(ledger.id, { r2: first(2, (op) => op === "get" || op === "list") });
    await ledger.check();
    expect(c.n).toBe(2);
    await ledger.survives();
    reportInjections("R2 failure on a cold start", c.n);
  });
});

describe("fault: D1 calls fail", () => {
  it("indexing that fails retries by alarm and catches up; a turn whose prompt context fails is refused whole", async () => {
    const ledger = new Ledger(await createConversation());
    const marker = `dfault${crypto.randomUUID().slice(0, 8)}`;
    let c = await inject(ledger.id, { d1: first(3, (op) => op === "prepare" || op === "batch") });
    await ledger.turn(`indexing of ${marker} fails at first`);
    await new Promise((r) => setTimeout(r, 200));
    const found = async () =>
      (await api("GET", `/v1/search?q=${marker}&conversation=${ledger.id}&kind=message`)).json.data.filter(
        (h) => h.role === "user",
      ).length;
    // The indexer failed and left an alarm: it fires (30 s in real time; here on demand), failing
    // again while D1 is still down and setting the next alarm, until it catches up.
    let alarms = 0;
    while ((await found()) !== 1 && alarms < 5) {
      expect(await runDurableObjectAlarm(stubOf(ledger.id))).toBe(true);
      alarms++;
    }
    expect(await found()).toBe(1);
    expect(c.n).toBe(3);
    const d1Injected = c.n;
    await ledger.survives();

    // A project conversation reads its project from D1 before the turn: if that fails, nothing is saved.
    const project = await api("POST", "/v1/projects", { name: `p-${crypto.randomUUID().slice(0, 6)}` });
    const pl = new Ledger((await api("POST", "/v1/conversations", { title: "p", projectId: project.json.id })).json.id);
    c = await inject(pl.id, { d1: first(1, (op) => op === "prepare") });
    const refused = await send(pl.id, "the project lookup fails");
    expect(refused.status).toBe(502);
    expect(refused.json.error?.type).toBe("storage_error");
    expect(refused.json.messages).toEqual([]);
    await pl.survives();
    reportInjections(
      "D1 failure",
      d1Injected + c.n,
      `${d1Injected} during indexing (then the alarm), ${c.n} before a turn`,
    );
  });
});

describe("fault: the Durable Object is aborted mid-turn", () => {
  it("keeps what was saved, adopts what reached R2, re-indexes by alarm, and takes the next turn: 3 aborts", async () => {
    const ledger = new Ledger(await createConversation());
    await ledger.turn("before the crashes");
    // Each point hangs one batch write (by its seq) forever, then the object is aborted there.
    const points: { name: string; prompt: string; hang: (n: number) => Hook; adopted: boolean }[] = [
      {
        name: "the reply's R2 write in flight",
        prompt: "crash before my reply is written\n@reply-chars 2000",
        hang: (n) => first(1, batchPut(n + 2), "hang"),
        adopted: false,
      },
      {
        name: "the reply in R2, not yet in the index",
        prompt: "crash after my reply is written\n@reply-chars 2000",
        hang: (n) => first(1, batchPut(n + 2), "hang-after"),
        adopted: true,
      },
      {
        name: "a tool step's results in flight",
        prompt: 'crash in a tool step\n@tool conversation_read {"from_seq":1,"to_seq":1}',
        hang: (n) => first(1, batchPut(n + 3), "hang"),
        adopted: false,
      },
    ];
    for (const point of points) {
      const counter = await inject(ledger.id, { r2: point.hang(ledger.told.length) });
      let deltas = "";
      const turn = sseTurn(ledger.id, point.prompt, (e) => {
        if (e.type === "delta") deltas += e.text;
      });
      while (counter.n === 0) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50)); // let the events before the hang reach the client
      await runInDurableObject(stubOf(ledger.id), (_i, state) => state.abort("injected crash")).catch(() => {});
      const events = await turn;
      // The stream from the dead object broke: the answer says so (error, then turn_end), never silence.
      expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "turn_end"]);
      expect(events.at(-2)).toMatchObject({ error: { type: "turn_interrupted" } });
      ledger.record(events.filter((e) => e.type === "message").map((e) => e.message));
      const t = await transcript(ledger.id);
      if (point.adopted) {
        // The reply reached R2 before the crash: the restarted object adopts it; it is the streamed text.
        const extra = t.slice(ledger.told.length);
        expect(extra).toHaveLength(1);
        expect(extra[0].content.find((b) => b.type === "text")!.text).toBe(deltas);
        ledger.record(extra);
      }
      await ledger.check();
      // Indexing what was saved was the crashed turn's job: the alarm its append left does it.
      await runDurableObjectAlarm(stubOf(ledger.id));
      for (const m of ledger.told.filter((m) => m.role === "user" && m.content[0]?.type === "text")) {
        const words = ofType(m.content[0], "text").text.split("\n")[0];
        const hits = (
          await api("GET", `/v1/search?q=${encodeURIComponent(words)}&conversation=${ledger.id}&kind=message`)
        ).json.data;
        expect(
          hits.some((h) => h.id === m.id),
          words,
        ).toBe(true);
      }
      await ledger.survives();
    }
    reportInjections("Durable Object aborted mid-turn", points.length, points.map((p) => p.name).join("; "));
  });
});
