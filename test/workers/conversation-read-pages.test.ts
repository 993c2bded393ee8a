// Reading the current conversation page by page ends: the first page fixes the range (its next-page
// call carries from_seq and to_seq), so this turn's own tool calls never shift it.
import { describe, expect, it } from "vitest";
import { createConversation, replyText, send, turnMessages } from "./helpers";
import { ofType, resultText } from "../blocks";

const resultOf = (r: { text: string }) => resultText(ofType(turnMessages(r)[2].content[0], "tool_result"));
const header = (s: string) => s.slice(0, s.indexOf("\n"));
const body = (s: string) => s.slice(s.indexOf("\n") + 1);

describe("conversation_read pages", { timeout: 120_000 }, () => {
  it("walks a range of the current conversation to its end exactly once", async () => {
    const id = await createConversation();
    const big = await send(id, "write\n@reply-chars 60000");
    const reply = replyText(turnMessages(big).find((m) => m.role === "assistant")!);
    let out = resultOf(await send(id, `@tool conversation_read {"from_seq":1}`));
    const first = header(out);
    const total = /chars \d+-\d+ of (\d+)/.exec(first)![1];
    const range = /messages seq (\d+-\d+) of/.exec(first)![1];
    let text = body(out);
    let pages = 1;
    for (let next = /next page: conversation_read (\{.*\})\]/.exec(out); next; pages++) {
      expect(pages).toBeLessThan(5);
      const args = JSON.parse(next[1]) as Record<string, unknown>;
      out = resultOf(await send(id, `@tool conversation_read ${next[1]}`));
      // The same range and the same text as the first page named: the offsets stay true.
      expect(/chars \d+-\d+ of (\d+)/.exec(header(out))![1]).toBe(total);
      expect(header(out)).toContain(`messages seq ${range} of`);
      expect(args).toMatchObject({ from_seq: 1, to_seq: Number(range.split("-")[1]) });
      text += body(out);
      next = /next page: conversation_read (\{.*\})\]/.exec(out);
    }
    expect(pages).toBe(Math.ceil(Number(total) / 40_000));
    expect(text.length).toBe(Number(total));
    expect(text).toContain(reply);
  });

  it("honours an explicit to_seq", async () => {
    const id = await createConversation();
    await send(id, "one");
    await send(id, "two");
    const out = resultOf(await send(id, `@tool conversation_read {"from_seq":1,"to_seq":2}`));
    expect(header(out)).toContain("messages seq 1-2 of");
    expect(body(out)).toContain("one");
    expect(body(out)).not.toContain("two");
  });
});
