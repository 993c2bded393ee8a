// The Markdown export of two messages (a user's text, then the assistant's "ok"), as lines: the
// source exportText reads (services/transfer/export-format.ts), built from plain arrays.
import type { StoredMessage } from "../../core/types";
import { type ExportAttachment, exportText } from "../../services/transfer/export-format";

/** Every time in the export: the messages' and the export's own. */
export const at = "2026-01-01T00:00:00.000Z";

async function* each<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** The export's lines when the user wrote `text` (with `attachments`) and the assistant answered "ok". */
export async function markdown(text: string, attachments: ExportAttachment[] = []): Promise<string[]> {
  const messages = [
    { id: "m1", seq: 1, role: "user", createdAt: at, content: [{ type: "text", text }] },
    { id: "m2", seq: 2, role: "assistant", createdAt: at, content: [{ type: "text", text: "ok" }] },
  ] as StoredMessage[];
  const source = {
    conversation: { id: "conv_1", title: "t" },
    episodes: [],
    cards: each<unknown>([]),
    attachments: each(attachments),
    messages: each(messages),
  };
  let out = "";
  for await (const piece of exportText(source, "markdown", at)) out += piece;
  return out.split("\n");
}
