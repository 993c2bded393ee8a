// The replaced exchanges of an imported transcript. An export marks each message a regenerate
// replaced with `superseded: true` and `supersededBy` (the id, in the exported conversation, of the
// user message that replaced it), as GET …/messages does. On import the ids are reassigned, so the
// marks are checked as the body streams (SupersededCheck: every `supersededBy` names a later user
// message of the same transcript: a prompt, after the run it replaced or after the attachment notes
// uploaded since, as a regenerate leaves them) and turned into the new conversation's ranges as it
// is written (SupersededRanges), which keep the replaced messages out of every later request, as before.
import { isAttachmentNote } from "../render";
import type { ContentBlock } from "../types";
import { TranscriptError } from "./transcript-check";

/** What the two passes read of a message: its id in the export, whom it was replaced by, its role. */
export interface SupersededMarks {
  role: "user" | "assistant";
  agent?: unknown;
  /** Its id in the transcript (an export's `id`), kept only while a later message needs it. */
  sourceId?: string;
  /** The `id` of the user message that replaced it (an export's `supersededBy`). */
  supersededBy?: string;
  content?: ContentBlock[];
}

/** A message a person wrote (a regenerate's range starts at one, and its copy is one): no tool results. */
const isPrompt = (m: SupersededMarks) =>
  m.role === "user" && !m.agent && !(m.content ?? []).some((b) => b.type === "tool_result");

/**
 * The staging pass: holds the `supersededBy` ids not yet met (a handful: one per regenerate, not
 * one per message). A message that answers one must be a user message of the conversation itself
 * (a prompt, saved again by the regenerate), and each must be answered by a later message.
 */
export class SupersededCheck {
  private readonly waiting = new Map<string, string>();
  /** The run of messages replaced by the same message that the last one belongs to. */
  private run: { by: string; where: string } | null = null;

  /**
   * A regenerate replaces whole exchanges: each run of messages superseded by the same message
   * starts at a prompt and is followed by the message that replaced it (its copy of the prompt): at
   * once, or after the notes of files uploaded since, which a regenerate leaves before its copy
   * (durable-objects/conversation/regenerate.ts). A run that cut a tool call off from its result
   * would leave a replay the API refuses.
   */
  private checkRun(m: SupersededMarks, where: string): void {
    const run = this.run;
    if (run && run.by === m.supersededBy) return;
    // A note left before the copy: unless it is the copy itself, a prompt typed in a note's shape.
    if (
      run &&
      m.supersededBy === undefined &&
      !m.agent &&
      m.sourceId !== run.by &&
      isAttachmentNote({ role: m.role, content: m.content ?? [] })
    )
      return;
    if (run && m.sourceId !== run.by)
      throw new TranscriptError(
        `${where}: the messages superseded by ${run.by} (from ${run.where}) must be followed at once by ${run.by}, the prompt that replaced them`,
      );
    this.run = m.supersededBy === undefined ? null : { by: m.supersededBy, where };
    if (this.run && !isPrompt(m))
      throw new TranscriptError(
        `${where}: a superseded run (supersededBy ${m.supersededBy}) must start at a user's prompt: a regenerate replaces whole exchanges`,
      );
  }

  /** Checks one message; drops its `sourceId` unless an earlier message named it. */
  add(m: SupersededMarks, where: string): void {
    this.checkRun(m, where);
    if (m.sourceId !== undefined && this.waiting.has(m.sourceId)) {
      // Its copy of the prompt: tool results in its place would answer a call the replay left out.
      if (!isPrompt(m))
        throw new TranscriptError(
          `${where}: earlier messages were superseded by it (${this.waiting.get(m.sourceId)}), so it must be a user message of the conversation (a prompt), not a sub-agent's, nor tool results`,
        );
      this.waiting.delete(m.sourceId);
    } else delete m.sourceId;
    if (m.supersededBy !== undefined && !this.waiting.has(m.supersededBy)) this.waiting.set(m.supersededBy, where);
  }

  /** The transcript ended: every `supersededBy` must have named a later message. */
  end(): void {
    for (const [id, where] of this.waiting)
      throw new TranscriptError(`${where}: supersededBy ${id} names no later message of the transcript`);
  }
}

/**
 * The commit pass: the messages in order with their new ids and seqs, then `ranges()`: each run of
 * consecutive messages replaced by the same message is one range, `by` its new id.
 */
export class SupersededRanges {
  private readonly open: { fromSeq: number; toSeq: number; by: string }[] = [];
  private readonly newIds = new Map<string, string>();

  add(m: SupersededMarks, at: { id: string; seq: number }): void {
    if (m.sourceId !== undefined) this.newIds.set(m.sourceId, at.id);
    if (m.supersededBy === undefined) return;
    const last = this.open[this.open.length - 1];
    if (last && last.by === m.supersededBy && last.toSeq === at.seq - 1) last.toSeq = at.seq;
    else this.open.push({ fromSeq: at.seq, toSeq: at.seq, by: m.supersededBy });
  }

  /** The head's `superseded` ranges, `by` as the conversation's ids (every one was checked while staging). */
  ranges(): { fromSeq: number; toSeq: number; by: string }[] {
    return this.open.map((r) => {
      const by = this.newIds.get(r.by);
      if (!by) throw new Error(`staged transcript: superseding message ${r.by} was not written`);
      return { ...r, by };
    });
  }
}
