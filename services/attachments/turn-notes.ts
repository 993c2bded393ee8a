// A turn's `attachments`: files already uploaded (to any of the tenant's conversations or
// projects) joined to the turn by id. Each becomes the same reference note its upload produced,
// placed in the turn's user message ahead of the text, and activates the tools for its kind.
// Resolved before the turn starts, so an unknown id refuses the turn with nothing saved.
import { attachmentNote, TOOLS_FOR } from "./note";
import { isId } from "../../core/ids";
import type { ContentBlock } from "../../core/types";
import { getAttachmentRow, toAttachment } from "./store";

/** A turn's content with its files joined, or the first id that is not a ready attachment of the tenant. */
export type AttachedTurn =
  | { kind: "attached"; content: ContentBlock[]; activate: string[] }
  | { kind: "unknown"; id: string };

interface TurnAttachments {
  notes: ContentBlock[];
  tools: string[];
}

/** The notes and tools for `ids`, or the first id that is not a ready attachment of this tenant. */
async function resolveTurnAttachments(
  db: D1Database,
  tenantId: string,
  ids: readonly string[] | undefined,
): Promise<({ kind: "resolved" } & TurnAttachments) | { kind: "unknown"; id: string }> {
  const notes: ContentBlock[] = [];
  const tools = new Set<string>();
  for (const id of new Set(ids ?? [])) {
    // Another tenant's id, a malformed one and an unfinished upload all read the same.
    const row = isId("att", id) ? await getAttachmentRow(db, tenantId, id) : null;
    if (row?.status !== "ready") return { kind: "unknown", id };
    const attachment = toAttachment(row);
    notes.push({ type: "text", text: attachmentNote(attachment) });
    for (const t of TOOLS_FOR[attachment.facts.kind] ?? []) tools.add(t);
  }
  return { kind: "resolved", notes, tools: [...tools].sort() };
}

/**
 * A turn's content with its attached files joined: their notes ahead of the text, and the tools
 * they need to activate. The one place both turn paths (HTTP and websocket frames) build it.
 */
export async function withAttachments(options: {
  db: D1Database;
  tenantId: string;
  ids: readonly string[] | undefined;
  content: ContentBlock[];
}): Promise<AttachedTurn> {
  const { db, tenantId, ids, content } = options;
  const attached = await resolveTurnAttachments(db, tenantId, ids);
  return attached.kind === "unknown"
    ? attached
    : { kind: "attached", content: [...attached.notes, ...content], activate: attached.tools };
}

export const unknownAttachmentMessage = (id: string) => `attachments: unknown attachment ${JSON.stringify(id)}`;
