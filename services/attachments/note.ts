// The reference note an attachment becomes in the conversation: name, id, type, size, real facts
// and the tools that read it. Never the content. The tier varies with size: a small file's note
// invites reading it whole, a large one's says to go a range at a time or search. Each format
// writes its own facts and "how to read it" line (formats/*/index.ts).
import { formatOfKind, type AttachmentFacts } from "./formats";
import { noteText } from "./formats/format";

export { TOOLS_FOR, type AttachmentFacts } from "./formats";

const SMALL = 200 * 1024;
const LARGE = 20 * 1024 * 1024;

/**
 * A type the note may show: `type/subtype` in a media type's characters (RFC 6838: at most 127
 * each). The stored type can be the uploader's Content-Type (when neither the bytes nor the name
 * told one), which is any text: anything else shows as a neutral word.
 */
const MEDIA_TYPE = /^[\w!#$&^.+-]{1,127}\/[\w!#$&^.+-]{1,127}$/;
const shownType = (type: string) => (MEDIA_TYPE.test(type) ? type : "unknown type");

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

export function attachmentNote(a: {
  id: string;
  name: string;
  type: string;
  size: number;
  facts: AttachmentFacts;
}): string {
  const f = a.facts;
  const tier = a.size > LARGE ? "large" : a.size > SMALL ? "medium" : "small";
  const format = formatOfKind(f.kind);
  const { facts, how } = format
    ? format.note(f, { arg: `"attachment_id":"${a.id}"`, size: a.size, tier })
    : { facts: [], how: "No tool reads this type; its bytes are stored." };
  // A parser's message may quote the file.
  if (f.problem) facts.push(`could not be inspected: ${noteText(f.problem)}`);
  const tierText =
    tier === "large" ? "large file: never read it whole" : tier === "medium" ? "medium file" : "small file";
  return [
    `<attachment id="${a.id}" name="${noteText(a.name)}">`,
    `${shownType(a.type)}, ${humanBytes(a.size)} (${tierText})${facts.length ? `; ${facts.join("; ")}` : ""}.`,
    `${how} Its content is not in this conversation: do not answer about it before reading it.`,
    "</attachment>",
  ].join("\n");
}
