// An attachment note saved during a client-tool pause (PausedTurns.deferNote → savedDeferredNotes:
// a user message of its own, after the step's results) is no prompt of a turn: a refused turn around
// it is still left out whole, the note stays (its file still exists), and a server tool call the
// paused reply still awaits is kept when the note rides with the client's results.
import { describe, expect, it } from "vitest";
import { buildModelRequest } from "../../core/replay";
import { refusedTurns } from "../../core/replay-rules";
import { defaultSettings, type Settings } from "../../core/settings";
import type { ContentBlock, StoredMessage } from "../../core/types";
import { catalogEntry } from "../../core/models/lookup";
import { storedMessage } from "../stored-messages";

const SONNET = catalogEntry("claude-sonnet-5-5")!;

const msg = storedMessage;
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const pick = (id: string): ContentBlock => ({ type: "tool_use", id, name: "pick_file", input: {} });
const picked = (id: string): ContentBlock => ({ type: "tool_result", tool_use_id: id, content: "picked" });
const search: ContentBlock = {
  type: "server_tool_use",
  id: "srvtoolu_1",
  name: "web_search",
  input: { query: "tides" },
};

const NOTE =
  '<attachment id="att_abc123" name="report.pdf">\nPDF, 1.0 KB (small file).\nRead it. Its content is not in this conversation: do not answer about it before reading it.\n</attachment>';

const build = (history: StoredMessage[], settings: Settings = defaultSettings(), between = false) =>
  buildModelRequest({ model: SONNET, conversationId: "conv_1", settings, system: [], tools: [], history, between })
    .request;

describe("a refused turn with an attachment note saved inside it", () => {
  const refusedWithNote = () => [
    msg("user", [text("REFUSED PROMPT: do the forbidden thing")]),
    msg("assistant", [pick("toolu_1")], "tool_use"),
    msg("user", [picked("toolu_1")]),
    msg("user", [text(NOTE)]),
    msg("assistant", [text("I can't help with that.")], "refusal"),
  ];

  it("is left out whole once a later prompt follows, and the note stays", () => {
    const body = JSON.stringify(build([...refusedWithNote(), msg("user", [text("Next question: what is 2+2?")])]));
    expect(body).not.toContain("REFUSED PROMPT");
    expect(body).not.toContain("toolu_1");
    expect(body).not.toContain("I can't help with that.");
    expect(body).toContain("att_abc123");
    expect(body).toContain("Next question");
  });

  it("the note rides with the next prompt in one user message", () => {
    const request = build([
      msg("user", [text("hello")]),
      msg("assistant", [text("hi")], "end_turn"),
      ...refusedWithNote(),
      msg("user", [text("Next question: what is 2+2?")]),
    ]);
    expect(request.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(request.messages[2].content).toEqual([
      text(NOTE),
      expect.objectContaining(text("Next question: what is 2+2?")),
    ]);
  });

  it("is left out whole in the /replay view (between turns), the note kept", () => {
    const body = JSON.stringify(build(refusedWithNote(), defaultSettings(), true));
    expect(body).not.toContain("REFUSED PROMPT");
    expect(body).toContain("att_abc123");
  });

  it("a note is never counted as a dropped message of the refused turn", () => {
    const history = [...refusedWithNote(), msg("user", [text("next")])];
    expect([...refusedTurns(history)].sort()).toEqual([0, 1, 2, 4]);
  });

  it("a note saved between the refusal and the next prompt stays too", () => {
    const history = [
      msg("user", [text("REFUSED PROMPT")]),
      msg("assistant", [text("I can't help with that.")], "refusal"),
      msg("user", [text(NOTE)]),
      msg("user", [text("next")]),
    ];
    const request = build(history);
    expect(request.messages).toEqual([{ role: "user", content: [text(NOTE), expect.objectContaining(text("next"))] }]);
  });
});

describe("a server tool call awaited across a client-tool pause", () => {
  const settings = { ...defaultSettings(), serverTools: ["web_search" as const] };
  const paused = () => [
    msg("user", [text("go")]),
    msg("assistant", [search, pick("toolu_1")], "tool_use"),
    msg("user", [picked("toolu_1")]),
  ];

  it("is kept when an attachment note arrived during the pause", () => {
    const request = build([...paused(), msg("user", [text(NOTE)])], settings);
    expect(request.messages[1].content).toEqual([search, pick("toolu_1")]);
    expect(JSON.stringify(request)).toContain("att_abc123");
  });

  it("is kept without the note too, and dropped once a new prompt follows the results", () => {
    expect(build(paused(), settings).messages[1].content).toEqual([search, pick("toolu_1")]);
    const prompted = build([...paused(), msg("user", [text("never mind")])], settings);
    expect(JSON.stringify(prompted)).not.toContain("srvtoolu_1");
  });
});

describe("a refused prompt a person typed in the shape of an attachment note", () => {
  it("is its own turn: left out with its refusal, and the exchange before it stays", () => {
    const history = [
      msg("user", [text("FIRST-PROMPT about rivers")]),
      msg("assistant", [text("Rivers carve canyons.")], "end_turn"),
      msg("user", [text('<attachment id="att_abc123" name="notes.txt">\nplease help\n</attachment>')]),
      msg("assistant", [text("I can't help with that.")], "refusal"),
      msg("user", [text("SECOND-PROMPT what did I ask first?")]),
    ];
    const sent = JSON.stringify(build(history).messages);
    expect(sent).toContain("FIRST-PROMPT about rivers");
    expect(sent).toContain("Rivers carve canyons.");
    expect(sent).not.toContain("please help");
    expect(sent).not.toContain("I can't help");
    expect([...refusedTurns(history)].sort()).toEqual([2, 3]);
    // The /replay view between turns keeps the earlier exchange too.
    expect(JSON.stringify(build(history.slice(0, 4), defaultSettings(), true).messages)).toContain("FIRST-PROMPT");
  });
});
