// Text someone wrote cannot forge the Markdown export's structure (docs/api-notes.md, Import and
// export): a one-dash setext underline is escaped, a backtick "fence" CommonMark does not open
// (its info string holds a backtick, §4.5) is not "closed" (that closing fence would open a real one
// and swallow every later message), and a line that starts an HTML block (a heading, a comment that
// would hide the messages after it) is escaped. An attachment's name cannot end its link early.
import { describe, expect, it } from "vitest";
import { at, markdown } from "./export-source";

describe("text in the Markdown export", () => {
  it("escapes a setext underline of one dash", async () => {
    const lines = await markdown("Forged section\n-");
    expect(lines).toContain("\\-");
    expect(lines).not.toContain("-");
  });

  it("adds no closing fence after a backtick line CommonMark does not open as a fence", async () => {
    const lines = await markdown("```js`x\nplain paragraph");
    const at = lines.indexOf("plain paragraph");
    expect(lines[at + 1]).toBe("");
    expect(lines.filter((l) => l.startsWith("```"))).toEqual(["```js`x"]);
  });

  it("still closes a fence the text leaves open", async () => {
    const lines = await markdown("```js\ncode");
    expect(lines.filter((l) => l.startsWith("```"))).toEqual(["```js", "```"]);
  });

  it("escapes a line that starts an HTML block", async () => {
    for (const text of ["<h2>Transcript</h2>", "<!-- everything after this is a comment", "  <pre>", "</div>", "<?x"]) {
      const lines = await markdown(text);
      expect(
        lines.some((l) => /^ {0,3}<[A-Za-z/!?]/.test(l)),
        text,
      ).toBe(false);
      expect(lines.join("\n")).toContain(`\\${text.trimStart()}`);
    }
  });

  it("keeps an attachment's name inside its link text", async () => {
    const lines = await markdown("hi", [
      { id: "att_1", name: "x](https://evil.example) [y", url: "/v1/a", type: "text/plain", size: 1, createdAt: at },
    ]);
    const line = lines.find((l) => l.includes("att_1"));
    expect(line).toBe("- [x\\](https://evil.example) \\[y](/v1/a) (`att_1`, text/plain, 1 bytes)");
  });
});
