// What an import must refuse because the Messages API would refuse every later turn built from it,
// and what it must take because the platform itself stores it (its own export imports back): the
// import's whole first pass (services/transfer/import-staging.ts) over a bucket that only counts.
import { describe, expect, it } from "vitest";
import { parseImportedMessage } from "../../core/transcript/transcript-check";
import { MAX_IMPORT_MESSAGES, stageTranscript } from "../../services/transfer/import-staging";

const bucket = { put: async () => null, delete: async () => {} } as unknown as R2Bucket;

/** Stages the messages as a JSON body; resolves to the count, or rejects with the refusal. */
async function stage(messages: unknown[]): Promise<number> {
  const text = JSON.stringify({ messages });
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });
  return (await stageTranscript(bucket, { tenantId: "t", body, format: "json" })).messages;
}

const user = (content: unknown, extra = {}) => ({ role: "user", content, ...extra });
const reply = (content: unknown, extra = {}) => ({ role: "assistant", content, ...extra });
const call = (id: string, input: Record<string, unknown> = { query: "x" }) => ({
  type: "tool_use",
  id,
  name: "memory_search",
  input,
});
const result = (id: string, content: unknown = "r") => ({ type: "tool_result", tool_use_id: id, content });
const note = '<attachment id="att_01abc" name="n.txt">\nn.txt, text/plain, 6 B\n</attachment>';

describe("an import the platform exported itself", () => {
  it("takes a regenerate's copy after an attachment note uploaded after the replaced reply", async () => {
    const by = { superseded: true, supersededBy: "m4" };
    await expect(
      stage([
        user("What do herons eat?", { id: "m1", ...by }),
        reply("Fish.", { id: "m2", ...by }),
        user([{ type: "text", text: note }], { id: "m3" }),
        user("What do herons eat?", { id: "m4" }),
        reply("Fish and frogs.", { id: "m5" }),
      ]),
    ).resolves.toBe(5);
    // Anything else between the run and its copy is still refused.
    await expect(
      stage([
        user("a", { id: "m1", ...by }),
        reply("b", { id: "m2", ...by }),
        user("c", { id: "m3" }),
        user("a", { id: "m4" }),
        reply("d"),
      ]),
    ).rejects.toThrow("messages[2]: the messages superseded by m4 (from messages[0]) must be followed at once by m4");
  });

  it("takes a regenerate's copy of a prompt typed in the shape of an attachment note", async () => {
    // A person can type a note's shape; the copy that closes the run is the prompt, not an upload's note.
    const typed = '<attachment id="att_abc" name="recipe">\nWhat is a sourdough starter?\n</attachment>';
    const by = { superseded: true, supersededBy: "m3" };
    await expect(
      stage([
        user(typed, { id: "m1", ...by }),
        reply("A culture.", { id: "m2", ...by }),
        user(typed, { id: "m3" }),
        reply("Flour and water, fermented.", { id: "m4" }),
      ]),
    ).resolves.toBe(4);
  });

  it("takes a tool call whose input nests 64 levels, as deep as any JSON body may", async () => {
    const nest = (n: number): unknown => (n === 0 ? 1 : { v: nest(n - 1) });
    // The input's own brace is level 1: 64 levels in all.
    const deep = (levels: number) => [user("go"), reply([call("call_d", nest(levels) as Record<string, unknown>)])];
    await expect(stage(deep(64))).resolves.toBe(2);
    await expect(stage(deep(65))).rejects.toThrow("messages[1]: nested deeper than 67 levels");
  });

  it("stores a server tool call's blocks with their keys in the order they came", () => {
    const srv = {
      type: "server_tool_use",
      id: "srvtoolu_1",
      name: "web_search",
      caller: { type: "direct" },
      input: {},
    };
    const txt = { citations: null, text: "hi", type: "text" };
    const m = parseImportedMessage(JSON.stringify(reply([srv, txt])), "m");
    expect(JSON.stringify(m!.content)).toBe(JSON.stringify([srv, txt]));
    const res = { tool_use_id: "call_1", type: "tool_result", content: [{ text: "r", type: "text" }] };
    expect(JSON.stringify(parseImportedMessage(JSON.stringify(user([res])), "m")!.content)).toBe(JSON.stringify([res]));
  });
});

describe("an import whose every later turn the Messages API would refuse", () => {
  it.each([
    [
      "opens on an assistant's tool call answered by the first user message",
      [reply([call("call_a")]), user([result("call_a")]), reply("done")],
      "messages[0]: a tool_use before the transcript's first user message",
    ],
    [
      "opens on assistant messages, one holding a call (its interrupted result would answer nothing)",
      [reply("hello"), reply([call("call_a")]), user("go on"), reply("done")],
      "messages[1]: a tool_use before the transcript's first user message",
    ],
    [
      "carries citations in a tool result's text",
      [
        user("q"),
        reply([call("call_a")]),
        user([result("call_a", [{ type: "text", text: "r", citations: [{ type: "char_location" }] }])]),
        reply("done"),
      ],
      "messages[2]: citations belong in an assistant message's text",
    ],
    [
      "replaces a run by a message of tool results",
      [
        user("q", { id: "m1", superseded: true, supersededBy: "m4" }),
        reply([call("call_a")], { id: "m2", superseded: true, supersededBy: "m4" }),
        user([result("call_a")], { id: "m4" }),
        reply("done"),
      ],
      "messages[2]: earlier messages were superseded by it (messages[0]), so it must be a user message of the conversation (a prompt)",
    ],
    [
      "marks a reply holding a tool call as a refusal",
      [user("q"), reply([call("call_a")], { stopReason: "refusal" }), user([result("call_a")]), reply("done")],
      'messages[1]: a reply with stopReason "refusal" cannot hold a tool_use',
    ],
    [
      "gives a user message a stop reason",
      [user("q", { stopReason: "end_turn" }), reply("a")],
      "messages[0]: stopReason belongs to an assistant message",
    ],
  ])("is refused when it %s", async (_what, messages, problem) => {
    await expect(stage(messages)).rejects.toThrow(problem);
  });

  it("is refused past the most messages the model may be sent, naming the limit", async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? reply("a") : user("q")));
    await expect(stage(many(MAX_IMPORT_MESSAGES + 1))).rejects.toThrow(
      `messages[${MAX_IMPORT_MESSAGES}]: more than ${MAX_IMPORT_MESSAGES} messages`,
    );
    // Replaced exchanges and sub-agents' messages are never sent, so they do not count.
    await expect(
      stage([
        user("x", { superseded: true, supersededBy: "m1" }),
        ...many(MAX_IMPORT_MESSAGES).map((m, i) => (i ? m : { ...m, id: "m1" })),
      ]),
    ).resolves.toBe(MAX_IMPORT_MESSAGES + 1);
  }, 60_000);
});
