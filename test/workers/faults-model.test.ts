// Faults: the model answers 429, 500 or 529 in every phase of a turn — the call answering the
// prompt, the call after a tool result, and the in-turn compaction's summary call — persistently
// (every SDK attempt fails) or transiently (the first attempt fails, the SDK's retry succeeds).
// After each: the transcript is exactly what was sent and answered, the summary invariants hold,
// and the conversation takes the next turn. (Fold-call faults: faults-summarizer.test.ts.)
import { describe, expect, it } from "vitest";
import { api, createConversation, send } from "./helpers";
import { Ledger, reportInjections } from "./fault-ledger";

const STATUSES = [429, 500, 529] as const;
type Phase = "first call" | "after a tool result" | "compaction summary";

interface Case {
  phase: Phase;
  status: (typeof STATUSES)[number] | "overflow";
  transient: boolean;
}

const cases: Case[] = [];
for (const phase of ["first call", "after a tool result", "compaction summary"] as Phase[])
  for (const status of STATUSES) for (const transient of [false, true]) cases.push({ phase, status, transient });
// The compaction's summary call past the model's window (the provider's overflow 400): the fallback state.
cases.push({ phase: "compaction summary", status: "overflow", transient: false });

async function runCase(c: Case): Promise<void> {
  const compacting = c.phase === "compaction summary";
  // A small budget makes every call of the next turn compact: its summary call is the target.
  const id = await createConversation(compacting ? { contextWindowTokens: 9_000, outputReserveTokens: 1_000 } : undefined);
  const ledger = new Ledger(id);
  await ledger.turn(compacting ? "fill the window\n@reply-chars 5000" : "a first, healthy turn");
  const attempts = c.transient ? " attempts=1" : "";
  const line =
    c.phase === "first call" ? `@model-error ${c.status}${attempts}`
    : c.phase === "after a tool result" ? `@tool conversation_read {"from_seq":1,"to_seq":1}\n@model-error ${c.status} call=2${attempts}`
    : `@model-error ${c.status} summarize${attempts}`;
  const r = await send(id, `fault ${c.phase} ${c.status}\n${line}`);
  ledger.record(r.json.messages);
  const failsTurn = !c.transient && !compacting;
  expect(r.status, `${c.phase} ${c.status}: ${r.text.slice(0, 200)}`).toBe(failsTurn ? 502 : 200);
  if (failsTurn) {
    expect(r.json.error).toMatchObject({ type: "model_error", status: c.status });
    // What the turn finished before the failure stays saved: the prompt, and the tool step.
    expect(r.json.messages.map((m: any) => m.role)).toEqual(c.phase === "first call" ? ["user"] : ["user", "assistant", "user"]);
  }
  if (compacting) {
    const cards = (await api("GET", `/v1/conversations/${id}/timeline`)).json.cards;
    expect(cards.at(-1).card.summarized).toBe(c.transient ? "model" : "fallback");
  }
  await ledger.survives();
}

describe("fault: model errors in every phase of a turn", () => {
  it(`survives ${cases.length} injections: 429/500/529 × first call, after a tool result, compaction summary × persistent, transient; and an overflow of the summary call`, async () => {
    const started = Date.now();
    // In parallel, one conversation each: the SDK's backoff waits overlap.
    await Promise.all(cases.map(runCase));
    for (const phase of ["first call", "after a tool result", "compaction summary"])
      reportInjections(`model error, ${phase}`, cases.filter((c) => c.phase === phase && c.status !== "overflow").length, "429, 500, 529; persistent and transient");
    reportInjections("overflow 400, compaction summary", cases.filter((c) => c.status === "overflow").length);
    expect(Date.now() - started).toBeLessThan(25_000);
  });
});
