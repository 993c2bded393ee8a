import { describe, expect, it } from "vitest";
import {
  buildFoldRequest,
  capSummary,
  chooseFoldMark,
  excerpt,
  fallbackFoldSummary,
  FOLD_PROMPT_BUDGET_CHARS,
  foldCut,
  foldExcerpts,
  planFold,
} from "../../core/fold";
import { buildModelRequest, summaryPreamble } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import type { ContentBlock, StoredMessage } from "../../core/types";
import { blocksIn, cacheControlOf } from "../blocks";
import { catalogEntry } from "../../core/models/lookup";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

function conversation(spec: string): StoredMessage[] {
  // u = real user prompt, a = assistant text, t = assistant tool_use, r = tool-result carrier
  return spec.split("").map((k, i) => {
    const seq = i + 1;
    const content: ContentBlock[] =
      k === "u"
        ? [{ type: "text", text: `question ${seq}` }]
        : k === "a"
          ? [{ type: "text", text: `answer ${seq}` }]
          : k === "t"
            ? [{ type: "tool_use", id: `tu${seq}`, name: "conversation_read", input: {} }]
            : [{ type: "tool_result", tool_use_id: `tu${seq - 1}`, content: `result ${seq}` }];
    return {
      id: `msg_${seq}`,
      seq,
      role: k === "u" || k === "r" ? "user" : "assistant",
      content,
      createdAt: "2026-01-01T00:00:00Z",
    };
  });
}

describe("chooseFoldMark", () => {
  it("keeps the last 8 messages when the 8th from the end is a user prompt", () => {
    const region = conversation("uauauauauauauaua"); // 16 messages
    expect(chooseFoldMark(region, 8)).toBe(8);
    expect(region[8].role).toBe("user");
  });

  it("walks back to the nearest real user prompt, keeping more than 8", () => {
    const region = conversation("uauauauautrtrtrtrtra"); // a long tool turn at the end
    const mark = chooseFoldMark(region, 8)!;
    expect(region.length - mark).toBeGreaterThanOrEqual(8);
    expect(region[mark].role).toBe("user");
    expect(region[mark].content[0].type).toBe("text");
    expect(mark).toBe(8);
  });

  it("never cuts between a tool_use and its tool_result", () => {
    for (const spec of ["uatruatrtruatruatrua", "utrtrtrauauatrtrauatra", "uauatrtrtrtrauatrauau"]) {
      const region = conversation(spec);
      const mark = chooseFoldMark(region, 8);
      if (mark === null) continue;
      expect(region[mark].content.some((b) => b.type === "tool_result")).toBe(false);
      expect(region[mark - 1].content.some((b) => b.type === "tool_use")).toBe(false);
    }
  });

  it("folds nothing when the tail is all tool traffic back to the first prompt", () => {
    expect(chooseFoldMark(conversation("utrtrtrtrtrtrtrtrtra"), 8)).toBeNull();
  });

  it("folds nothing when the region is no longer than the tail", () => {
    expect(chooseFoldMark(conversation("uauauaua"), 8)).toBeNull();
    expect(chooseFoldMark(conversation("uauauauau"), 8)).toBeNull(); // the only earlier prompt is index 0
  });
});

describe("foldCut", () => {
  it("ends the fold at the last prompt the request showed, or keeps the mark when all were shown or none can cut", () => {
    const c = conversation("uauatruauaua");
    expect(foldCut(c, 10, 10)).toBe(10);
    expect(foldCut(c, 10, 12)).toBe(10);
    // Shown 0..6: the last prompt at or before index 7 is index 6; shown 0..4, index 2.
    expect(foldCut(c, 10, 7)).toBe(6);
    expect(foldCut(c, 10, 6)).toBe(6);
    expect(foldCut(c, 10, 5)).toBe(2);
    // Only the first prompt shown: nowhere to cut before the mark but 0, which folds nothing.
    expect(foldCut(conversation("uatrtrtrua"), 8, 1)).toBe(8);
  });

  it("counts what fits the budget with the request's own excerpts", () => {
    const c = conversation("ua".repeat(50));
    expect(foldExcerpts(c, FOLD_PROMPT_BUDGET_CHARS).included).toBe(100);
    const { lines, included } = foldExcerpts(c, 500);
    expect(included).toBeLessThan(100);
    expect(lines.at(-1)).toBe(`[… ${100 - included} later messages omitted to keep this request bounded …]`);
  });
});

describe("planFold", () => {
  it("shows only the messages before the cut when the budget leaves some out", () => {
    const region = conversation("ua".repeat(120)).map((m) => ({
      ...m,
      content: [{ type: "text" as const, text: `${(m.content[0] as { text: string }).text} ${"lorem ".repeat(16)}` }],
    }));
    const plan = planFold(region, 8, 20_000)!;
    expect(plan.mark).toBe(232);
    const { included } = foldExcerpts(region.slice(0, plan.mark), 20_000);
    expect(included).toBeLessThan(plan.mark);
    expect(plan.cut).toBe(foldCut(region, plan.mark, included));
    expect(plan.cut).toBeLessThan(included);
    const shown = plan.excerpts.flatMap((l) => [...(/^\[seq (\d+) /.exec(l)?.slice(1) ?? [])]).map(Number);
    expect(shown).toEqual(region.slice(0, plan.cut).map((m) => m.seq));
    expect(plan.excerpts.at(-1)).toBe(
      `[… ${plan.mark - plan.cut} later messages omitted to keep this request bounded …]`,
    );
  });

  it("shows every folded message when they fit, and plans nothing when nothing can be folded", () => {
    const region = conversation("ua".repeat(10));
    const plan = planFold(region, 8, 20_000)!;
    expect(plan).toMatchObject({ mark: 12, cut: 12 });
    expect(plan.excerpts).toEqual(foldExcerpts(region.slice(0, 12), 20_000).lines);
    expect(planFold(conversation("uauaua"), 8, 20_000)).toBeNull();
  });
});

describe("the fold request", () => {
  it("carries the previous summary, the excerpts and the cap in plain words", () => {
    const folded = conversation("uauautra");
    const req = buildFoldRequest({ model: SONNET, previousSummary: "PREVIOUS SUMMARY TEXT", folded, maxChars: 6000 });
    const sys = req.system[0].text;
    expect(sys).toContain("at most 6000 characters");
    expect(sys).toMatch(/fold/i);
    const body = JSON.stringify(req.messages);
    expect(body).toContain("PREVIOUS SUMMARY TEXT");
    for (const m of folded) expect(body).toContain(`[seq ${m.seq} `);
  });

  it("bounds the prompt however large the region is", () => {
    const huge: StoredMessage[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `msg_${i}`,
      seq: i + 1,
      role: i % 2 ? "assistant" : "user",
      createdAt: "x",
      content: [{ type: "text", text: "word ".repeat(4000) }],
    }));
    const req = buildFoldRequest({ model: SONNET, previousSummary: null, folded: huge, maxChars: 6000 });
    const chars = JSON.stringify(req.messages).length;
    expect(chars).toBeLessThan(FOLD_PROMPT_BUDGET_CHARS + 10_000);
    expect(JSON.stringify(req.messages)).toContain("omitted");
  });

  it("excerpts keep the head and tail and say how much was cut", () => {
    const text = "H".repeat(5000) + "T".repeat(5000);
    const e = excerpt(text, 1000);
    expect(e.length).toBeLessThanOrEqual(1000);
    expect(e.startsWith("HHH")).toBe(true);
    expect(e.endsWith("TTT")).toBe(true);
    expect(e).toMatch(/chars omitted/);
  });
});

describe("the fallback fold summary", () => {
  it("keeps a user's line that starts with @ (it is the user's text, not a directive to drop)", () => {
    const folded = conversation("uaua");
    folded[0].content = [{ type: "text", text: "@alice please review PR-4471 before Friday" }];
    folded[2].content = [{ type: "text", text: "\n  @channel deploy window moved to 14:00\nsecond line" }];
    const summary = fallbackFoldSummary(null, folded, 2_000);
    expect(summary).toContain("- seq 1: @alice please review PR-4471 before Friday");
    expect(summary).toContain("- seq 3: @channel deploy window moved to 14:00");
    expect(summary).not.toContain("second line");
  });
  it("cuts a long first line without splitting an emoji: the summary is replayed on every request", () => {
    const folded = conversation("ua");
    folded[0].content = [{ type: "text", text: `${"a".repeat(159)}😀😀 rest` }];
    const summary = fallbackFoldSummary(null, folded, 2_000);
    expect(summary.isWellFormed()).toBe(true);
    expect(summary).toMatch(/^- seq 1: a{159}$/m);
  });
});

describe("capSummary", () => {
  it("enforces the cap even when the model overruns", () => {
    const over = "A sentence of the summary. ".repeat(500);
    const capped = capSummary(over, 6000);
    expect(capped.length).toBeLessThanOrEqual(6000);
    expect(capped.endsWith(".")).toBe(true);
    expect(capSummary("short", 6000)).toBe("short");
    expect(capSummary("x".repeat(9000), 6000).length).toBe(6000);
  });
});

describe("replay with a summary", () => {
  it("is preamble (summary + recovery pointer), acknowledgement, then the tail from a user message", () => {
    const tail = conversation("uauaua").map((m) => ({ ...m, seq: m.seq + 40 }));
    const { request } = buildModelRequest({
      model: SONNET,
      conversationId: "conv_X",
      settings: defaultSettings(),
      system: [],
      tools: [],
      history: tail,
      summary: { summary: "THE SUMMARY", throughSeq: 40 },
    });
    const [pre, ack, first] = request.messages;
    const preText = (pre.content as { text: string }[])[0].text;
    expect(pre.role).toBe("user");
    expect(preText).toContain("THE SUMMARY");
    expect(preText).toContain('conversation_read {"conversation_id":"conv_X","from_seq":1,"to_seq":40}');
    expect(preText).toContain("memory_search");
    expect(ack.role).toBe("assistant");
    expect(first).toEqual({ role: "user", content: tail[0].content });
    // Cache breakpoints: after the acknowledgement and on the last message, never on stored blocks.
    expect(cacheControlOf(blocksIn(ack).at(-1))).toEqual({ type: "ephemeral" });
    expect(cacheControlOf(blocksIn(request.messages.at(-1)!).at(-1))).toEqual({ type: "ephemeral" });
    expect(cacheControlOf(tail.at(-1)!.content.at(-1))).toBeUndefined();
    expect(request.messages).toHaveLength(2 + tail.length);
  });

  it("is byte-stable for the same summary", () => {
    const s = { summary: "S", throughSeq: 12 };
    expect(JSON.stringify(summaryPreamble("conv_X", s))).toBe(JSON.stringify(summaryPreamble("conv_X", { ...s })));
  });
});
