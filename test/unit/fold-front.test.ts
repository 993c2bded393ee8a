// A fold reads only the front of the tail it folds (durable-objects/conversation/fold-coordinator.ts):
// its region and the stubs shown in it come out as they would over the whole tail (an import's tail
// holds up to 50,000 messages, and each of its ~N/80 folds used to go over all of it), whatever the
// tail holds: tool results stale or not, refused turns, attachment notes, results beside a question.
import { describe, expect, it } from "vitest";
import { planFold, turnByTurnFoldLength } from "../../core/fold";
import { withoutRefusedTurns } from "../../core/replay-rules";
import { applyStubsBeforePrompt, type StubInput } from "../../core/stubs";
import type { ContentBlock, StoredMessage } from "../../core/types";
import { foldRegion, frontEnd, shownBefore } from "../../durable-objects/conversation/fold-coordinator";

/** A small deterministic generator (no Math.random: every run sees the same tails). */
function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (s * 1103515245 + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

type Part = Omit<StoredMessage, "seq" | "id" | "createdAt">;
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const note = (k: number) => text(`<attachment id="att_${k}" name="f${k}.txt">\nnotes\n</attachment>`);

/** One turn of a kind `pick` chooses: chat, a tool loop, a refusal, an upload's note, a result beside a question. */
function turn(pick: (n: number) => number, k: number): Part[] {
  const size = [100, 900, 2_500, 6_000][pick(4)];
  const result = (id: string): ContentBlock => ({
    type: "tool_result",
    tool_use_id: id,
    content: "r".repeat([300, 2_100, 3_000, 9_000][pick(4)]),
    ...(pick(5) === 0 ? { is_error: true } : {}),
  });
  const call = (id: string): ContentBlock => ({
    type: "tool_use",
    id,
    name: "memory_search",
    input: { query: `q${k}` },
  });
  switch (pick(6)) {
    case 0:
    case 1:
      return [
        { role: "user", content: [text(`question ${k} ${"q".repeat(size)}`)] },
        { role: "assistant", content: [text(`answer ${k} ${"a".repeat(size)}`)] },
      ];
    case 2: {
      const steps = 1 + pick(3);
      const out: Part[] = [{ role: "user", content: [text(`use the tools ${k}`)] }];
      for (let s = 0; s < steps; s++) {
        out.push({ role: "assistant", content: [call(`toolu_${k}_${s}`)] });
        out.push({ role: "user", content: [result(`toolu_${k}_${s}`)] });
      }
      out.push({ role: "assistant", content: [text(`done ${k} ${"a".repeat(size)}`)] });
      return out;
    }
    case 3: {
      // Refused; sometimes a fallback model answered within the same turn.
      const out: Part[] = [
        { role: "user", content: [text(`bad question ${k} ${"q".repeat(size)}`)] },
        { role: "assistant", content: [text("no")], stopReason: "refusal" },
      ];
      if (pick(2)) out.push({ role: "assistant", content: [text(`fallback ${k}`)], stopReason: "end_turn" });
      return out;
    }
    case 4:
      // An upload's note between turns, or a note sent as the turn's prompt.
      return pick(2)
        ? [{ role: "user", content: [note(k)] }]
        : [
            { role: "user", content: [note(k)] },
            { role: "assistant", content: [text(`read the file ${k}`)] },
          ];
    default:
      // A step's results and the next question in one user message (an imported transcript's).
      return [
        { role: "user", content: [text(`look it up ${k}`)] },
        { role: "assistant", content: [call(`toolu_${k}`)] },
        { role: "user", content: [result(`toolu_${k}`), text(`and then ${k}?`)] },
        { role: "assistant", content: [text(`then ${k} ${"a".repeat(size)}`)] },
      ];
  }
}

/** A tail after a fold boundary at `after` (seqs from after + 1), `turns` turns long. */
function tailOf(seed: number, turns: number, after = 0): StoredMessage[] {
  const pick = rng(seed);
  const parts = Array.from({ length: turns }, (_, k) => turn(pick, k)).flat();
  return parts.map((m, i) => ({ ...m, id: `msg_${seed}_${i}`, seq: after + 1 + i, createdAt: "2026-01-01T00:00:00Z" }));
}

/** The whole-tail computations a fold made before it read only the front. */
const wholeRegion = (tail: readonly StoredMessage[], s: { tailMessages: number; foldThresholdChars: number }) => {
  const all = withoutRefusedTurns(tail, true);
  return all.slice(0, turnByTurnFoldLength(all, s.tailMessages, s.foldThresholdChars));
};
const wholeShown = (tail: readonly StoredMessage[], stubs: StubInput) => {
  const { messages } = applyStubsBeforePrompt(tail, stubs, "conv_front");
  return (m: StoredMessage) => messages[tail.indexOf(m)];
};

/** The tail with a count of the distinct messages read from it. */
function counted(tail: StoredMessage[]): { tail: StoredMessage[]; read: () => number } {
  const seen = new Set<number>();
  const proxy = new Proxy(tail, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) seen.add(Number(key));
      return Reflect.get(target, key, receiver);
    },
  });
  return { tail: proxy, read: () => seen.size };
}

const SETTINGS = [
  { tailMessages: 8, foldThresholdChars: 4_000, stubMinChars: 2_000, stubAfterExchanges: 2, stubBatchChars: 4_000 },
  { tailMessages: 2, foldThresholdChars: 1_000, stubMinChars: 2_000, stubAfterExchanges: 1, stubBatchChars: 0 },
  { tailMessages: 12, foldThresholdChars: 20_000, stubMinChars: 2_000, stubAfterExchanges: 3, stubBatchChars: 20_000 },
  { tailMessages: 8, foldThresholdChars: 120_000, stubMinChars: 100, stubAfterExchanges: 2, stubBatchChars: 4_000 },
  // Results stay whole for many exchanges: the first front ends before the stubs reach its region.
  {
    tailMessages: 4,
    foldThresholdChars: 2_000,
    stubMinChars: 2_000,
    stubAfterExchanges: 25,
    stubBatchChars: 1_000_000,
  },
];

describe("a fold reads the front of its tail", () => {
  it("finds the region, the messages it folds and their stubs as the whole tail gives them", () => {
    let compared = 0;
    for (let seed = 1; seed <= 24; seed++)
      for (const [n, s] of SETTINGS.entries()) {
        const after = seed % 3 === 0 ? 120 : 0;
        const tail = tailOf(seed * 7 + n, 150, after);
        const region = foldRegion(tail, s);
        expect(region).toEqual(wholeRegion(tail, s));
        // With and without the stubs a fold commit recorded (its floor).
        const stubbedThrough = seed % 4 === 0 ? tail[20 + (seed % 30)].seq : seed % 4 === 1 ? after : undefined;
        const stubs = { ...s, stubbedThrough };
        const whole = wholeShown(tail, stubs);
        const plan = planFold(region, s.tailMessages, 160_000);
        // The end the fold's source uses (the plan's mark), the tail's end, and ends a commit's boundary may give.
        const ends = [plan ? tail.indexOf(region[plan.mark - 1]) + 1 : 0, tail.length, 1, 7 + seed, 40 + 3 * seed];
        for (const end of ends.filter((e) => e <= tail.length)) {
          const shown = shownBefore(tail, { end, stubs, conversationId: "conv_front" });
          for (const m of tail.slice(0, end)) expect(shown(m)).toEqual(whole(m));
          // A commit's folded messages: those before its boundary, as foldable keeps them.
          const boundary = tail[end]?.seq ?? Number.MAX_SAFE_INTEGER;
          const folded = withoutRefusedTurns(tail.slice(0, frontEnd(tail, end)), true).filter((m) => m.seq < boundary);
          expect(folded).toEqual(withoutRefusedTurns(tail, true).filter((m) => m.seq < boundary));
          compared++;
        }
      }
    expect(compared).toBeGreaterThan(500);
  });

  it("reads about one region of a long tail, however long the tail is", () => {
    const s = SETTINGS[0];
    for (const turns of [1_000, 4_000]) {
      const whole = tailOf(99, turns);
      const { tail, read } = counted(whole);
      const region = foldRegion(tail, s);
      const plan = planFold(region, s.tailMessages, 160_000);
      expect(plan).not.toBeNull();
      const end = whole.indexOf(region[plan!.mark - 1]) + 1;
      shownBefore(tail, { end, stubs: s, conversationId: "conv_front" });
      expect(whole.length).toBeGreaterThan(2_500);
      // The region and a bounded lookahead past it, not the tail.
      expect(read()).toBeLessThan(region.length + 300);
    }
  });
});
