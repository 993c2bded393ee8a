// Faults: the model answers 429, 500 or 529 in every phase of a turn — the call answering the
// prompt, the call after a tool result, and the in-turn compaction's summary call — persistently
// (every SDK attempt fails) or transiently (the first attempt fails, the SDK's retry succeeds).
// After each: the transcript is exactly what was sent and answered, the summary invariants hold,
// and the conversation takes the next turn. Every case also proves its fault was served: the
// offline model's log of the errors it answered (a transient fault leaves no other trace), whose
// counts are what the report prints. (Fold-call faults: faults-summarizer.test.ts.)
import { describe, expect, it } from "vitest";
import { servedFaults } from "../../core/offline-model";
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

const SDK_ATTEMPTS = 3; // the first attempt and the SDK's 2 retries (core/model-client.ts)

/** Runs one case; returns how many errors the model served for it. */
async function runCase(c: Case): Promise<number> {
  const compacting = c.phase === "compaction summary";
  // A small budget makes every call of the next turn compact: its summary call is the target.
  const id = await createConversation(
    compacting ? { contextWindowTokens: 9_000, outputReserveTokens: 1_000 } : undefined,
  );
  const ledger = new Ledger(id);
  await ledger.turn(compacting ? "fill the window\n@reply-chars 5000" : "a first, healthy turn");
  const attempts = c.transient ? " attempts=1" : "";
  const line =
    c.phase === "first call"
      ? `@model-error ${c.status}${attempts}`
      : c.phase === "after a tool result"
        ? `@tool conversation_read {"from_seq":1,"to_seq":1}\n@model-error ${c.status} call=2${attempts}`
        : // The turn reads the long reply back: its tool result is what a pass can cut (a pass that
          // could cut nothing would make no summary call).
          `@tool conversation_read {"from_seq":2,"to_seq":2}\n@model-error ${c.status} summarize${attempts}`;
  const label = `fault ${c.phase} ${c.status} ${c.transient ? "transient" : "persistent"}`;
  const r = await send(id, `${label}\n${line}`);
  ledger.record(r.json.messages);
  const failsTurn = !c.transient && !compacting;
  expect(r.status, `${c.phase} ${c.status}: ${r.text.slice(0, 200)}`).toBe(failsTurn ? 502 : 200);
  if (failsTurn) {
    expect(r.json.error).toMatchObject({ type: "model_error", status: c.status });
    // What the turn finished before the failure stays saved: the prompt, and the tool step.
    expect(r.json.messages.map((m) => m.role)).toEqual(
      c.phase === "first call" ? ["user"] : ["user", "assistant", "user"],
    );
  }
  if (compacting) {
    const cards = (await api("GET", `/v1/conversations/${id}/timeline`)).json.data;
    expect(cards.at(-1)).toMatchObject({ card: { summarized: c.transient ? "model" : "fallback" } });
  }
  await ledger.survives();

  // The fault really fired: a transient one on the first attempt only, a persistent one on every
  // attempt the SDK made (an overflow 400 is not retried).
  const served = servedFaults().filter((f) => f.prompt.includes(label) && f.status === c.status);
  expect(served.length, label).toBeGreaterThan(0);
  const failedAttempts = new Set(served.map((f) => f.attempt));
  if (c.transient) expect([...failedAttempts], label).toEqual([0]);
  else if (c.status !== "overflow")
    expect([...failedAttempts].sort(), label).toEqual(Array.from({ length: SDK_ATTEMPTS }, (_, i) => i));
  return served.length;
}

describe("fault: model errors in every phase of a turn", () => {
  it(`survives ${cases.length} injections: 429/500/529 × first call, after a tool result, compaction summary × persistent, transient; and an overflow of the summary call`, async () => {
    const started = Date.now();
    // In parallel, one conversation each: the SDK's backoff waits overlap.
    const served = await Promise.all(cases.map(runCase));
    const count = (pick: (c: Case) => boolean) => cases.reduce((n, c, i) => n + (pick(c) ? served[i] : 0), 0);
    for (const phase of ["first call", "after a tool result", "compaction summary"])
      reportInjections(
        `model error, ${phase}`,
        count((c) => c.phase === phase && c.status !== "overflow"),
        "errors served for 429, 500, 529; persistent and transient",
      );
    reportInjections(
      "overflow 400, compaction summary",
      count((c) => c.status === "overflow"),
    );
    expect(Date.now() - started).toBeLessThan(25_000);
  });
});
