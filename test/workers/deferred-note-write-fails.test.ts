// An attachment's note held back while a turn waits on client tools is kept until it is written:
// when its write after the step's results fails, it joins the conversation with the next turn.
import { describe, expect, it } from "vitest";
import { keptNote } from "./kept-notes";
import { send, textOf, transcript } from "./helpers";

describe("a note deferred during a paused turn", () => {
  it.each([
    ["is not lost when its write after the step's results fails: the next turn writes it", false],
    ["is written once when that write landed but its answer was lost", true],
  ])("%s", async (_, landed) => {
    const { id, callId } = await keptNote({ name: "deferred.txt", landed });
    const next = await send(id, "after the outage");
    expect(next.status).toBe(200);
    // The kept note is no message of the next turn: its messages start with its user message.
    const [own] = next.json.messages as { role: string; content: { type: string; text?: string }[] }[];
    expect(own?.role).toBe("user");
    expect(own?.content[0]).toMatchObject({ type: "text", text: "after the outage" });
    const all = await transcript(id);
    const notes = all.filter((m) => m.role === "user" && textOf(m).includes("deferred.txt"));
    expect(notes).toHaveLength(1);
    // After the step's results, before the next turn's message.
    const at = all.indexOf(notes[0]);
    expect(all[at - 1].content[0]).toMatchObject({ type: "tool_result", tool_use_id: callId });
    expect(textOf(all[at + 1])).toContain("after the outage");
  });
});
