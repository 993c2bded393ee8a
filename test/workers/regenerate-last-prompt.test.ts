// Regenerate finds the last prompt as the replay does (core/replay-rules.ts startsTurn): a typed
// message shaped like an attachment's note that the model answered is that prompt, and is run
// again; a last prompt that holds tool results cannot be copied, so the regenerate is a 409
// rather than a re-run of an earlier prompt that would supersede both exchanges.
import { describe, expect, it } from "vitest";
import { api, createConversation, newTenant, send, transcript } from "./helpers";

const regenerate = (id: string, key?: string) =>
  api("POST", `/v1/conversations/${id}/messages`, { regenerate: true }, { key });

describe("regenerate's last prompt", () => {
  it("is a typed message shaped like an attachment's note, when the model answered it", async () => {
    const id = await createConversation();
    await send(id, "Name a river.\n@reply-chars 60");
    const note = '<attachment id="att_01ABC" name="todo.txt">\nWhat is 2+2?\n</attachment>';
    const second = await send(id, note);
    expect(second.status).toBe(200);
    const [prompt, reply] = second.json.messages;
    expect(reply.role).toBe("assistant");

    const again = await regenerate(id);
    expect(again.status).toBe(200);
    const [copy] = again.json.messages;
    expect(copy.content).toEqual(prompt.content);
    expect(again.json.superseded).toMatchObject({ fromSeq: prompt.seq, toSeq: reply.seq });
    expect(again.json.superseded?.messageIds).toEqual([prompt.id, reply.id]);
    // The first exchange is untouched.
    const marked = (await transcript(id)).filter((m) => m.superseded).map((m) => m.seq);
    expect(marked).toEqual([prompt.seq, reply.seq]);
  });

  it("is refused with a 409 when it holds tool results, and nothing is superseded", async () => {
    const key = await newTenant();
    const imported = await api(
      "POST",
      "/v1/conversations/import",
      {
        messages: [
          { role: "user", content: "first question FROGLET" },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Let me look." },
              { type: "tool_use", id: "call_a", name: "lookup", input: {} },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "call_a", content: "found it" },
              { type: "text", text: "ok, now tell me about TOADSTOOL" },
            ],
          },
          { role: "assistant", content: "Toadstools are fungi." },
        ],
      },
      { key },
    );
    expect(imported.status).toBe(201);
    const id = imported.json.id;
    const again = await regenerate(id, key);
    expect(again.status).toBe(409);
    expect(again.json.error?.type).toBe("nothing_to_regenerate");
    expect((await transcript(id, key)).some((m) => m.superseded)).toBe(false);
  });
});
