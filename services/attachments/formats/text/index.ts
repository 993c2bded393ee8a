// The text format: any file that reads as text, addressed by line through a sparse line index.
import { type AttachmentFormat, counted } from "../format";
import { isProbablyText, readLines } from "./line-index";

export const textFormat = {
  kind: "text",
  detect: (s) => s.type.startsWith("text/") || s.type === "application/json" || isProbablyText(s.head),
  async probe(_reader, { type, text }) {
    const { index } = await text();
    // Bytes that read as text but had no telling name or type are plain text.
    return {
      facts: { lines: index.lines, ...(index.encoding ? { encoding: index.encoding } : {}) },
      type: type === "application/octet-stream" ? "text/plain" : type,
    };
  },
  keepsKindWhenUnreadable: false,
  tools: ["file_read"],
  note(f, { arg, tier }) {
    const facts = f.lines !== undefined ? [counted(f.lines, "line")] : [];
    if (f.encoding)
      facts.push(`encoded in ${f.encoding === "windows-1252" ? "Windows-1252" : f.encoding.toUpperCase()}`);
    const how =
      tier === "small"
        ? `Read it with file_read {${arg},"lines":"1-${Math.max(1, Math.min(f.lines ?? 400, 400))}"}.`
        : `Read it a line range at a time: file_read {${arg},"lines":"1-400"}.`;
    return { facts, how };
  },
  read: readLines,
} satisfies AttachmentFormat<"text">;
