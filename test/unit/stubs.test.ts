import { describe, expect, it } from "vitest";
import { buildModelRequest } from "../../core/replay";
import { defaultSettings } from "../../core/settings";
import { applyStubs, STUB_BATCH_MAX_WAIT, stubWatermark } from "../../core/stubs";
import type { ContentBlock, StoredMessage, WireMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { blockAs, blocksIn, toolResults } from "../blocks";
import { isAttachmentNote } from "../../core/render";
import { attachmentNote } from "../../services/attachments/note";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

/** A conversation from a compact script: each entry is a turn; a number is the size of one tool result in it. */
function script(turns: (number | null)[]): StoredMessage[] {
  const out: StoredMessage[] = [];
  const push = (role: "user" | "assistant", content: ContentBlock[]) =>
    out.push({ id: `msg_${out.length + 1}`, seq: out.length + 1, role, content, createdAt: "2026-01-01T00:00:00Z" });
  turns.forEach((size, t) => {
    push("user", [{ type: "text", text: `prompt ${t}` }]);
    if (size !== null) {
      push("assistant", [
        { type: "tool_use", id: `tu_${t}`, name: "file_read", input: { attachment_id: `att_${t}`, lines: "1-400" } },
      ]);
      push("user", [{ type: "tool_result", tool_use_id: `tu_${t}`, content: "x".repeat(size) }]);
    }
    push("assistant", [{ type: "text", text: `answer ${t}` }]);
  });
  return out;
}

const settings = (
  over: Partial<{ stubMinChars: number; stubAfterExchanges: number; stubBatchChars: number }> = {},
) => ({ stubMinChars: 2000, stubAfterExchanges: 2, stubBatchChars: 0, ...over });
const results = (ms: StoredMessage[]) => toolResults(ms);

describe("stale tool-result stubs", () => {
  it("stubs a result of exactly 2,000 chars but not one of 1,999", () => {
    const out = applyStubs(script([2000, 1999, null, null]), settings(), "conv_X");
    const [a, b] = results(out.messages);
    expect(a.content).toMatch(/^\[stale tool result replaced by this stub/);
    expect(b.content).toBe("x".repeat(1999));
    expect(out.stubbed).toBe(1);
  });

  it("stubs only results older than the last 2 user exchanges", () => {
    // Result in exchange 1; exchanges 2 and 3 are the last two -> stale.
    expect(applyStubs(script([5000, null, null]), settings(), "c").stubbed).toBe(1);
    // Exchanges 1 and 2 are the last two -> still fresh.
    expect(applyStubs(script([5000, null]), settings(), "c").stubbed).toBe(0);
    // With 3 exchanges kept, it takes a fourth.
    expect(applyStubs(script([5000, null, null]), settings({ stubAfterExchanges: 3 }), "c").stubbed).toBe(0);
    expect(applyStubs(script([5000, null, null, null]), settings({ stubAfterExchanges: 3 }), "c").stubbed).toBe(1);
  });

  it("counts tool-result carriers as part of their exchange, not as user exchanges", () => {
    // Exchange 2 has three tool rounds; they do not age exchange 1's result.
    const ms = script([5000, null]);
    const extra: StoredMessage[] = [];
    for (let r = 0; r < 3; r++) {
      extra.push({
        id: `x${r}a`,
        seq: 100 + 2 * r,
        role: "assistant",
        content: [{ type: "tool_use", id: `tx${r}`, name: "n", input: {} }],
        createdAt: "t",
      });
      extra.push({
        id: `x${r}b`,
        seq: 101 + 2 * r,
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `tx${r}`, content: "small" }],
        createdAt: "t",
      });
    }
    expect(applyStubs([...ms, ...extra], settings(), "c").stubbed).toBe(0);
  });

  it("counts an attachment's note as no exchange: it rides with the prompt after it", () => {
    const note = attachmentNote({
      id: "att_01J0000000000000000000000A",
      name: "report.txt",
      type: "text/plain",
      size: 1200,
      facts: { kind: "text", lines: 40 },
    });
    const withNote = (ms: StoredMessage[], at: number) => [
      ...ms.slice(0, at),
      {
        id: "msg_note",
        seq: 50,
        role: "user" as const,
        content: [{ type: "text" as const, text: note }],
        createdAt: "t",
      },
      ...ms.slice(at),
    ];
    // Exchange 1's result, with exchanges 2 and (a note, then) 3 after it: stubbed as without the note.
    const base = script([5000, 5000, null]);
    expect(applyStubs(base, settings(), "c").stubbed).toBe(1);
    expect(applyStubs(withNote(base, base.length - 2), settings(), "c").stubbed).toBe(1);
    // A note saved mid-turn, after a step's results, does not age the step before it either.
    const twoExchanges = script([5000, 5000]);
    expect(applyStubs(withNote(twoExchanges, twoExchanges.length - 1), settings(), "c").stubbed).toBe(0);
    // A user message that only quotes the note's shape with more text is a prompt.
    const prompt = { role: "user" as const, content: [{ type: "text" as const, text: `${note}\nsummarize it` }] };
    expect(isAttachmentNote(prompt)).toBe(false);
    expect(isAttachmentNote({ role: "user", content: [{ type: "text", text: note }] })).toBe(true);
  });

  it("weighs an image by its base64, and stubs a stale one naming the conversation_read call that returns it", () => {
    const ms = script([null, null, null]);
    const data = "A".repeat(400_000);
    ms.splice(
      1,
      0,
      ...[
        {
          id: "msg_img_call",
          seq: 90,
          role: "assistant" as const,
          content: [{ type: "tool_use" as const, id: "tu_img", name: "image_view", input: { attachment_id: "att_P" } }],
          createdAt: "t",
        },
        {
          id: "msg_img",
          seq: 91,
          role: "user" as const,
          content: [
            {
              type: "tool_result" as const,
              tool_use_id: "tu_img",
              content: [
                { type: "image" as const, source: { type: "base64" as const, media_type: "image/png" as const, data } },
              ],
            },
          ],
          createdAt: "t",
        },
      ],
    );
    const out = applyStubs(ms, settings(), "conv_I");
    expect(out.stubbed).toBe(1);
    expect(JSON.stringify(out.messages)).not.toContain(data);
    const stub = results(out.messages)[0].content as string;
    expect(stub).toContain('image_view {"attachment_id":"att_P"} returned an image, 400,000 chars in all');
    expect(stub).toContain(
      'conversation_read {"conversation_id":"conv_I","message_id":"msg_img","block":0} returns its text and the image.]',
    );
    expect(stub).not.toContain("same call again");
    expect(out.savedChars).toBeGreaterThan(399_000);
  });

  it("stubs a result sharing its user message with the next question: only the result, its text untouched", () => {
    // The results answer turn 0's call; the same message asks turn 1's question (an imported transcript).
    const ms = script([5000, null, null, null]);
    const mixed: StoredMessage = {
      ...ms[2],
      content: [...ms[2].content, { type: "text", text: "and the next question" }],
    };
    const merged = [...ms.slice(0, 2), mixed, ...ms.slice(5)].map((m, i) => ({ ...m, id: `msg_${i + 1}`, seq: i + 1 }));
    // The mixed message is exchange 1's prompt: its result is stale once that exchange is older than the last 2.
    const fresh = applyStubs(merged.slice(0, -2), settings(), "conv_M");
    expect(fresh.stubbed).toBe(0);
    expect(fresh.pendingChars).toBe(0);
    const out = applyStubs(merged, settings(), "conv_M");
    expect(out.stubbed).toBe(1);
    const [stub, text] = out.messages[2].content;
    expect(blockAs(stub, "tool_result").content).toContain(
      'file_read {"attachment_id":"att_0","lines":"1-400"} returned 5,000 chars (message msg_3, seq 3)',
    );
    expect(blockAs(stub, "tool_result").content).toContain(
      'conversation_read {"conversation_id":"conv_M","message_id":"msg_3","block":0}',
    );
    expect(text).toBe(mixed.content[1]);
    expect(out.savedChars).toBeGreaterThan(4000);
    // Same input, same bytes; the stored message is untouched.
    expect(JSON.stringify(applyStubs(merged, settings(), "conv_M").messages)).toBe(JSON.stringify(out.messages));
    expect(blockAs(merged[2].content[0], "tool_result").content).toBe("x".repeat(5000));
  });

  it("names the tool, its input, the size, the message and the exact call that returns the bytes", () => {
    const ms = script([25_000, null, null]);
    const stub = results(applyStubs(ms, settings(), "conv_X").messages)[0].content as string;
    expect(stub).toContain('file_read {"attachment_id":"att_0","lines":"1-400"}');
    expect(stub).toContain("25,000 chars");
    expect(stub).toContain("message msg_3");
    expect(stub).toContain('conversation_read {"conversation_id":"conv_X","message_id":"msg_3","block":0}');
    expect(stub.length).toBeLessThan(2000);
  });

  it("is deterministic and never touches the stored messages", () => {
    const ms = script([9000, 9000, null, null]);
    const copy = structuredClone(ms);
    const a = applyStubs(ms, settings(), "c");
    const b = applyStubs(ms, settings(), "c");
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(ms).toEqual(copy);
  });

  it("stubs a stale error result too, keeping is_error on its stub (the seed exempts no error)", () => {
    const ms = script([5000, null, null]);
    blockAs(ms[2].content[0], "tool_result").is_error = true;
    const out = applyStubs(ms, settings(), "c");
    expect(out.stubbed).toBe(1);
    const [stub] = results(out.messages);
    expect(stub.is_error).toBe(true);
    expect(stub.content).toBe(
      '[stale tool result replaced by this stub: file_read {"attachment_id":"att_0","lines":"1-400"} returned an error of 5,000 chars (message msg_3, seq 3). The original is stored unchanged and searchable; conversation_read {"conversation_id":"c","message_id":"msg_3","block":0} returns it byte for byte.]',
    );
    // Deterministic: the same history stubs the same bytes every time.
    expect(applyStubs(ms, settings(), "c").messages).toEqual(out.messages);
    // An error result fills a batch like any other.
    expect(stubWatermark(ms, settings({ stubBatchChars: 5000 }))).toBeGreaterThan(0);
  });
});

describe("batched stub transitions", () => {
  it("waits until the reclaimable chars reach the batch, then stubs everything stale at once", () => {
    const s = settings({ stubBatchChars: 12_000 });
    // Each 5,000-char result goes stale two exchanges later; the batch fills at the third.
    const turns: (number | null)[] = [5000, 5000, 5000, null, null, null];
    const marks = [];
    for (let n = 1; n <= turns.length; n++) marks.push(stubWatermark(script(turns.slice(0, n)), s));
    // No jump until three results (15,000 chars) are stale, then one jump covering all three.
    expect(marks.slice(0, 4).every((m) => m === 0)).toBe(true);
    expect(marks[4]).toBeGreaterThan(0);
    const out = applyStubs(script(turns.slice(0, 5)), s, "c");
    expect(out.stubbed).toBe(3);
    expect(applyStubs(script(turns.slice(0, 4)), s, "c").pendingChars).toBe(10_000);
  });

  it("stubs a lone stale result its batch never fills, STUB_BATCH_MAX_WAIT exchanges after it went stale", () => {
    const s = settings({ stubBatchChars: 4_000 });
    // One 3,000-char result in exchange 1: stale from exchange 3 on, under the 4,000 batch.
    const stubbedAt = (exchanges: number) =>
      applyStubs(script([3000, ...Array<null>(exchanges - 1).fill(null)]), s, "c").stubbed;
    const staleFrom = 3;
    for (let n = 1; n < staleFrom + STUB_BATCH_MAX_WAIT; n++) expect(stubbedAt(n), `${n} exchanges`).toBe(0);
    expect(stubbedAt(staleFrom + STUB_BATCH_MAX_WAIT)).toBe(1);
    expect(stubbedAt(staleFrom + STUB_BATCH_MAX_WAIT + 5)).toBe(1);
  });

  it("keeps the replayed prefix byte-identical between jumps, and changes it only at a jump", () => {
    const s = { ...defaultSettings(), stubBatchChars: 30_000 };
    const strip = (ms: WireMessage[]) =>
      JSON.stringify(
        ms.map((m) => ({ role: m.role, content: blocksIn(m).map((b) => ({ ...b, cache_control: undefined })) })),
      );
    const turns: (number | null)[] = [];
    let prev: { messages: WireMessage[]; mark: number } | null = null;
    let jumps = 0;
    let stable = 0;
    for (let t = 0; t < 40; t++) {
      turns.push(t % 3 === 0 ? 6000 : null);
      const history = script(turns);
      const messages = buildModelRequest({
        model: SONNET,
        conversationId: "c",
        settings: s,
        system: [],
        tools: [],
        history,
      }).request.messages;
      const mark = stubWatermark(history, s);
      if (prev) {
        const samePrefix = strip(messages.slice(0, prev.messages.length)) === strip(prev.messages);
        if (mark === prev.mark) {
          expect(samePrefix).toBe(true);
          stable++;
        } else {
          expect(samePrefix).toBe(false);
          jumps++;
        }
      }
      prev = { messages, mark };
    }
    expect(jumps).toBeGreaterThan(1);
    expect(stable).toBeGreaterThan(jumps * 3);
  });
});

describe("stubs and refused turns", () => {
  /** Exchange 0 read a 5,000-char result; exchange 1 was refused; `after` prompts follow. */
  function withRefusal(after: number): StoredMessage[] {
    const ms = script([5000]);
    const push = (role: "user" | "assistant", content: ContentBlock[], stopReason?: string) =>
      ms.push({
        id: `msg_${ms.length + 1}`,
        seq: ms.length + 1,
        role,
        content,
        createdAt: "2026-01-01T00:00:00Z",
        ...(stopReason ? { stopReason } : {}),
      });
    push("user", [{ type: "text", text: "something refused" }]);
    push("assistant", [{ type: "text", text: "[refused]" }], "refusal");
    for (let i = 0; i < after; i++) {
      push("user", [{ type: "text", text: `later prompt ${i}` }]);
      if (i < after - 1) push("assistant", [{ type: "text", text: `later answer ${i}` }]);
    }
    return ms;
  }

  it("counts a refused turn (never replayed) as no exchange: a result two exchanges back stays whole", () => {
    const history = withRefusal(1);
    expect(applyStubs(history, settings(), "c").stubbed).toBe(0);
    const { request } = buildModelRequest({
      conversationId: "c",
      settings: defaultSettings(SONNET),
      model: SONNET,
      system: [{ type: "text", text: "s" }],
      tools: [],
      history,
    });
    expect(JSON.stringify(request.messages)).not.toContain("refused");
    expect(JSON.stringify(request.messages)).toContain("x".repeat(5000));
    // One more real exchange and it is stale, as without the refusal.
    expect(applyStubs(withRefusal(2), settings(), "c").stubbed).toBe(1);
  });
});
