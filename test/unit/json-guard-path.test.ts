// A lone surrogate deep in an imported message is named from the message down
// (`messages[1].content.0.input.k`), as docs/api-notes.md promises: a root named by a path into a
// document keeps that path. A document's own name (a body, a socket frame) is still left off
// before its fields (`title`, not `body.title`), as the schema's errors name them.
import { describe, expect, it } from "vitest";
import { jsonValueProblem } from "../../core/json-guard";
import { parseImportedMessage, TranscriptError } from "../../core/transcript/transcript-check";

const LONE = "\ud800";
const problemOf = (raw: string, where: string): string => {
  try {
    parseImportedMessage(raw, where);
  } catch (err) {
    if (err instanceof TranscriptError) return err.message;
    throw err;
  }
  return "no problem";
};

describe("where a lone surrogate is", () => {
  it("names the imported message and the block's field it sits in", () => {
    const raw = '{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"x","input":{"k":"\\ud800"}}]}';
    expect(problemOf(raw, "messages[1]")).toBe(
      "messages[1].content.0.input.k: not well-formed Unicode (a lone surrogate)",
    );
    const usage = `{"role":"assistant","content":"hi","usage":{"input_tokens":1,"note":"\\ud800"}}`;
    expect(problemOf(usage, "messages[3] (line 4)")).toBe(
      "messages[3] (line 4).usage.note: not well-formed Unicode (a lone surrogate)",
    );
  });

  it("keeps a path root's name, and leaves a document's off before its fields", () => {
    expect(jsonValueProblem({ k: [LONE] }, "messages[1].content.0.input")).toBe(
      "messages[1].content.0.input.k[0]: not well-formed Unicode (a lone surrogate)",
    );
    expect(jsonValueProblem({ title: LONE })).toBe("title: not well-formed Unicode (a lone surrogate)");
    expect(jsonValueProblem({ content: LONE }, "frame")).toBe("content: not well-formed Unicode (a lone surrogate)");
    // A field that happens to share the document's name is still named under it.
    expect(jsonValueProblem({ body: { k: LONE } })).toBe("body.k: not well-formed Unicode (a lone surrogate)");
  });
});
