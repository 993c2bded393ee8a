// The conversation object stays a coordinator of small parts: every file of its folder is short
// and opens with a header saying what it does, and the object keeps every RPC and hook by name.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

const DIR = normalize(join(dirname(new URL(import.meta.url).pathname), "../../durable-objects/conversation"));
// Lines as the formatter writes them (biome.jsonc, width 120), which run about a fifth longer than
// the hand-wrapped lines the first limits (400 and 300) were set on.
const MAX_PART_LINES = 500;
const MAX_OBJECT_LINES = 380;
/** What workers, the summarizer and tests call on the object: renaming one breaks them. */
const SURFACE = [
  "create",
  "getMeta",
  "patch",
  "delete",
  "listMessages",
  "readMessages",
  "replay",
  "send",
  "postToolResults",
  "addAttachmentNote",
  "importMessages",
  "timeline",
  "promptSnapshots",
  "foldSource",
  "commitFold",
  "fetch",
  "alarm",
  "webSocketMessage",
  "webSocketClose",
];

const parts = readdirSync(DIR)
  .filter((name) => name.endsWith(".ts"))
  .map((name) => ({ name, lines: readFileSync(join(DIR, name), "utf8").split("\n") }));

/** Files over their limit, and files whose first two lines are not a comment. */
function partProblems(files: { name: string; lines: string[] }[]): string[] {
  const problems: string[] = [];
  for (const { name, lines } of files) {
    const limit = name === "conversation-do.ts" ? MAX_OBJECT_LINES : MAX_PART_LINES;
    if (lines.length > limit) problems.push(`${name}: ${lines.length} lines, over ${limit}`);
    if (!lines.slice(0, 2).every((line) => line.startsWith("// ")))
      problems.push(`${name}: no header comment on its first two lines`);
  }
  return problems;
}

describe("the conversation object's parts", () => {
  it("are short files that each open with a header comment", () => {
    expect(parts.length).toBeGreaterThan(8);
    expect(partProblems(parts)).toEqual([]);
  });

  it("flags a long file and a file without a header", () => {
    const long = Array.from({ length: MAX_OBJECT_LINES + 1 }, () => "// x");
    expect(
      partProblems([
        { name: "conversation-do.ts", lines: long },
        { name: "bare.ts", lines: ["import x from 'y';", "// late"] },
      ]),
    ).toEqual([
      `conversation-do.ts: ${MAX_OBJECT_LINES + 1} lines, over ${MAX_OBJECT_LINES}`,
      "bare.ts: no header comment on its first two lines",
    ]);
  });

  it("keep every RPC method and hook on ConversationDO", () => {
    const text = readFileSync(join(DIR, "conversation-do.ts"), "utf8");
    const declared = SURFACE.filter((name) => new RegExp(`^  (?:override )?(?:async )?${name}\\(`, "m").test(text));
    expect(declared).toEqual(SURFACE);
  });
});
